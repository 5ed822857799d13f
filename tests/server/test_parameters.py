"""Request parameters that change an answer's meaning are honoured or refused with a 400 naming them.

Over replay (which honours no sampler setting) every such parameter is refused; the backend
capabilities decide (``supports_*``). ``GET /v1/models/{id}``, and a preamble whose ``phase`` the
client dropped, are here too.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from openai import BadRequestError, NotFoundError
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.server.errors import ApiError
from harmony_chat.server.harmony_request import ServedModel, request_effort
from harmony_chat.server.sampling_request import check_sampling, parse_logit_bias
from tests.helpers import ids
from tests.server.conftest import DATE, PromptRecordingReplay, replay_server, running
from tests.server.test_chat_completions import AFTER_TOOL, ANSWER
from tests.server.test_responses import WEATHER

USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]


class SamplerReplay(PromptRecordingReplay):
    """Replay that says it honours penalties and logit bias, to show what the server asks of a backend."""

    supports_penalties = True
    supports_logit_bias = True


def test_models_retrieve_names_the_model_or_404s(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    with server as running:
        client = running.client()
        model = client.models.retrieve("replay-model")
        with pytest.raises(NotFoundError) as unknown:
            client.models.retrieve("gpt-4o")
        slashed = httpx.get(running.url + "/v1/models/openai/gpt-oss-20b", timeout=10)
    assert (model.id, model.object, model.owned_by) == ("replay-model", "model", "harmony-chat")
    assert unknown.value.code == "model_not_found" and unknown.value.param == "model"
    assert slashed.status_code == 404 and slashed.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"logprobs": True}, "logprobs"),
        ({"logprobs": True, "top_logprobs": 3}, "logprobs"),
        ({"top_logprobs": 3}, "top_logprobs"),
        ({"logprobs": True, "top_logprobs": 21}, "top_logprobs"),
        ({"logit_bias": {"17": 5}}, "logit_bias"),
        ({"logit_bias": {"200002": -100}}, "logit_bias"),
        ({"logit_bias": {"hello": 1}}, "logit_bias"),
        ({"frequency_penalty": 0.5}, "frequency_penalty"),
        ({"presence_penalty": -1.0}, "presence_penalty"),
        ({"presence_penalty": 3.0}, "presence_penalty"),
        ({"functions": [{"name": "f", "parameters": {"type": "object"}}]}, "functions"),
        ({"function_call": "auto"}, "function_call"),
        ({"modalities": ["text", "audio"]}, "modalities"),
        ({"audio": {"voice": "alloy", "format": "wav"}}, "audio"),
        ({"stream": "yes"}, "stream"),
        ({"stream": 1}, "stream"),
    ],
)
def test_chat_parameters_the_replay_backend_cannot_honour_are_400(
    encoding: HarmonyEncoding, extra: dict[str, Any], param: str
) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running, pytest.raises(BadRequestError) as refused:
        running.client().chat.completions.create(model="replay-model", messages=USER, extra_body=extra)
    assert refused.value.param == param, refused.value.message
    assert backend.prompts == []


def test_harmless_values_are_accepted(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER, ANSWER)
    with server as running:
        client = running.client()
        chat = client.chat.completions.create(
            model="replay-model",
            messages=USER,
            frequency_penalty=0,
            presence_penalty=0.0,
            logprobs=False,
            modalities=["text"],
            logit_bias={},
        )
        response = client.responses.create(model="replay-model", input="Hi", background=False, include=[])
    assert chat.choices[0].message.content == "2 + 2 = 4." and chat.choices[0].logprobs is None
    assert response.output_text == "2 + 2 = 4."
    assert len(backend.prompts) == 2


@pytest.mark.parametrize(
    ("extra", "param", "named"),
    [
        ({"background": True}, "background", "background"),
        ({"include": ["file_search_call.results"]}, "include", "file_search_call.results"),
        ({"include": ["message.output_text.logprobs"]}, "include", "message.output_text.logprobs"),
        ({"top_logprobs": 2}, "logprobs", "logprobs"),
        ({"stream": "yes"}, "stream", "stream"),
        ({"store": "no"}, "store", "store"),
        ({"prompt": {"id": "pmpt_1"}}, "prompt", "prompt"),
        ({"conversation": "conv_1", "previous_response_id": "resp_1"}, "previous_response_id", "conversation"),
    ],
)
def test_responses_parameters_that_cannot_be_honoured_are_400(
    encoding: HarmonyEncoding, extra: dict[str, Any], param: str, named: str
) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running, pytest.raises(BadRequestError) as refused:
        running.client().responses.create(model="replay-model", input="Hi", extra_body=extra)
    assert refused.value.param == param and named in refused.value.message
    assert backend.prompts == []


def test_the_backend_decides_what_is_honoured(encoding: HarmonyEncoding) -> None:
    class Capable:
        name = "capable"
        supports_penalties = True
        supports_logit_bias = True
        supports_logprobs = True

    class PenaltiesOnly(Capable):
        name = "sglang"
        supports_logit_bias = False
        supports_logprobs = False

    everything = {"frequency_penalty": 0.5, "presence_penalty": 0.5, "logit_bias": {17: 1.0}, "logprobs": 2}
    check_sampling(everything, Capable())  # type: ignore[arg-type]
    check_sampling({"frequency_penalty": 0.5, "presence_penalty": -0.5}, PenaltiesOnly())  # type: ignore[arg-type]
    with pytest.raises(Exception, match="logit_bias is not supported by the sglang backend"):
        check_sampling({"logit_bias": {17: 1.0}}, PenaltiesOnly())  # type: ignore[arg-type]
    assert parse_logit_bias({"17": 2, "199997": -100}) == {17: 2.0, 199997: -100.0}


def test_remote_engines_receive_penalties_and_logit_bias() -> None:
    from harmony_chat.backends.remote.llama_server import LlamaServerBackend
    from harmony_chat.backends.remote.sglang import SglangBackend
    from harmony_chat.backends.remote.vllm import VllmBackend

    sampling = SamplingParams(frequency_penalty=0.4, presence_penalty=-0.3, logit_bias={17: 2.5})
    client: Any = None
    _, llama = LlamaServerBackend(client)._request([1, 2], sampling, [200002], None)
    vllm_backend = VllmBackend(client)
    vllm_backend.model_name = "m"
    _, vllm = vllm_backend._request([1, 2], sampling, [200002], None)
    _, sglang = SglangBackend(client)._request([1, 2], sampling, [200002], None)
    assert (llama["frequency_penalty"], llama["presence_penalty"], llama["logit_bias"]) == (0.4, -0.3, [[17, 2.5]])
    assert (vllm["frequency_penalty"], vllm["presence_penalty"], vllm["logit_bias"]) == (0.4, -0.3, {"17": 2.5})
    params = sglang["sampling_params"]
    assert (params["frequency_penalty"], params["presence_penalty"]) == (0.4, -0.3) and "logit_bias" not in params
    assert not SglangBackend.supports_logit_bias and SglangBackend.supports_penalties
    assert LlamaServerBackend.supports_logit_bias and VllmBackend.supports_logit_bias


def test_a_preamble_without_phase_before_a_function_call_stays_commentary(encoding: HarmonyEncoding) -> None:
    """pydantic-ai drops ``phase``: the message right before a call is still the call's preamble."""
    backend, server = replay_server(encoding, AFTER_TOOL, AFTER_TOOL)
    call: Any = {
        "type": "function_call",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"location":"Oslo"}',
    }
    output: Any = {"type": "function_call_output", "call_id": "call_1", "output": "snow"}
    preamble: Any = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Let me check."}],
    }
    with server as running:
        client = running.client()
        client.responses.create(
            model="replay-model",
            input=[{"role": "user", "content": "Weather in Oslo?"}, preamble, call, output],
            tools=[WEATHER],
        )
        final: Any = {**preamble, "content": [{"type": "output_text", "text": "It snows."}]}
        client.responses.create(
            model="replay-model",
            input=[{"role": "user", "content": "Weather in Oslo?"}, final, {"role": "user", "content": "Thanks"}],
        )
    with_call = str(encoding.decode(backend.prompts[0]))
    assert "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>" in with_call
    assert "final<|message|>Let me check." not in with_call
    answered = str(encoding.decode(backend.prompts[1]))
    assert "<|start|>assistant<|channel|>final<|message|>It snows.<|end|>" in answered  # no call next: an answer


def test_the_server_passes_penalties_and_bias_to_a_backend_that_takes_them(encoding: HarmonyEncoding) -> None:
    backend = SamplerReplay([ids(encoding, ANSWER)] * 2, name="replay-model")
    backend.load()
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE)
    with running(served) as server:
        client = server.client()
        client.chat.completions.create(
            model="replay-model",
            messages=USER,
            frequency_penalty=0.5,
            presence_penalty=-1.5,
            logit_bias={"17": 3, "18": -100},
        )
        client.chat.completions.create(model="replay-model", messages=USER)
    asked, plain = backend.samplings
    assert (asked.frequency_penalty, asked.presence_penalty) == (0.5, -1.5)
    assert asked.logit_bias == {17: 3.0, 18: -100.0} and asked.logprobs is None
    assert (plain.frequency_penalty, plain.presence_penalty, plain.logit_bias) == (0.0, 0.0, None)


def test_a_requests_effort_is_parse_effort_with_the_apis_contract() -> None:
    """``request_effort``: not given is None, ``minimal`` is ``low``, and a bad value is a 400 naming the field."""
    assert request_effort(None, "reasoning_effort") is None
    assert request_effort(" HIGH ", "reasoning_effort") == "high"
    assert request_effort("minimal", "reasoning.effort") == "low"
    with pytest.raises(ApiError) as refused:
        request_effort("extreme", "reasoning.effort")
    assert refused.value.status == 400 and refused.value.param == "reasoning.effort"
    assert "'extreme'" in refused.value.message
