"""Workflow fixture: the canonical stale-padding bug (vLLM issue 41841), written from scratch."""

from vllm.v1.attention.backend import CommonAttentionMetadata


class GPUModelRunner:
    def _build_attention_metadata(self, num_reqs, num_reqs_padded):
        computed = self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]
        prompt = self.input_batch.num_prompt_tokens_cpu_tensor[:num_reqs_padded]
        is_prefilling = computed < prompt
        # Build the metadata the attention backends read.
        meta = CommonAttentionMetadata(
            num_reqs=num_reqs_padded,
            is_prefilling=is_prefilling,
        )
        return meta
