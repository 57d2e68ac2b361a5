# source: https://github.com/andimarafioti/faster-qwen3-tts/pull/37
# fixes: tts_voice_prompt_cache_into_embedding.py
# fix: the cached reference codes are cloned after the device move, so the embedding gets a normal tensor (the pull request's change)
import torch
from torch import nn


class TalkerModel(nn.Module):
    def __init__(self, vocab=32, dim=8):
        super().__init__()
        self.codec_embedding = nn.Embedding(vocab, dim)
        self.text_projection = nn.Linear(dim, dim)

    def generate_icl_prompt(self, text_embed, ref_code):
        codec_embed = self.codec_embedding(ref_code)
        return torch.cat([self.text_projection(text_embed), codec_embed], dim=1)


class UpstreamTTS:
    """Stands in for the upstream library: its prompt builder is decorated with inference_mode."""

    def __init__(self):
        self.model = TalkerModel()
        self.audio_tokenizer = nn.Linear(16, 32)

    @torch.inference_mode()
    def create_voice_clone_prompt(self, ref_audio):
        frames = ref_audio.view(1, -1, 16)
        ref_code = self.audio_tokenizer(frames).argmax(dim=-1)
        return {"ref_code": [ref_code], "icl_mode": [True]}


class FasterTTS:
    def __init__(self, upstream):
        self.upstream = upstream
        self._voice_prompt_cache = {}

    def _prepare_generation(self, text_embed, ref_audio, ref_key):
        if ref_key in self._voice_prompt_cache:
            vcp = self._voice_prompt_cache[ref_key]
        else:
            vcp = self.upstream.create_voice_clone_prompt(ref_audio)
            self._voice_prompt_cache[ref_key] = vcp
        return self._build_talker_inputs_local(self.upstream.model, text_embed, vcp)

    def _build_talker_inputs_local(self, m, text_embed, voice_clone_prompt):
        if voice_clone_prompt["icl_mode"][0]:
            ref_code = voice_clone_prompt["ref_code"][0].to(next(m.parameters()).device).clone()
            return m.generate_icl_prompt(text_embed, ref_code)
        return m.text_projection(text_embed)


if __name__ == "__main__":
    torch.manual_seed(0)
    tts = FasterTTS(UpstreamTTS())
    talker_inputs = tts._prepare_generation(torch.randn(1, 3, 8), torch.randn(64), "ref.wav")
    print("talker inputs", tuple(talker_inputs.shape))
