"""A request's sampling: the fields it sets, merged over the server's ``[sampling]`` by name."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from openai import BadRequestError
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.server.chat_request import ChatRequest
from harmony_chat.server.harmony_request import HarmonyRequest, ServedModel, turn_options
from harmony_chat.server.responses_request import ResponsesRequest
from tests.helpers import ids
from tests.server.conftest import DATE, PromptRecordingReplay, replay_server, running
from tests.server.test_chat_completions import ANSWER

USER: Any = [{"role": "user", "content": "What is 2 + 2?"}]
FIELDS = {field.name for field in dataclasses.fields(SamplingParams)}


def test_overrides_name_sampling_params_fields() -> None:
    chat = ChatRequest.model_validate(
        {
            "model": "m",
            "messages": USER,
            "max_tokens": 10,
            "max_completion_tokens": 20,
            "temperature": 0.5,
            "top_p": 0.9,
            "top_k": -1,
            "min_p": 0.1,
            "seed": 3,
            "frequency_penalty": 0.2,
            "presence_penalty": 0.0,
            "logit_bias": {"17": 1},
            "logprobs": True,
        }
    )
    overrides = chat.sampling_overrides()
    assert overrides == {
        "max_tokens": 20,  # max_completion_tokens wins over the older max_tokens
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 0,  # vLLM's -1 (off) is SamplingParams' 0
        "min_p": 0.1,
        "seed": 3,
        "frequency_penalty": 0.2,
        "presence_penalty": 0.0,
        "logit_bias": {17: 1.0},
        "logprobs": 0,
    }
    assert ChatRequest.model_validate({"model": "m", "messages": USER}).sampling_overrides() == {}
    responses = ResponsesRequest.model_validate({"model": "m", "max_output_tokens": 77, "temperature": 0.2})
    assert responses.sampling_overrides() == {"max_tokens": 77, "temperature": 0.2}
    assert set(overrides) <= FIELDS


def test_turn_options_merge_the_overrides_over_the_servers_sampling(encoding: HarmonyEncoding) -> None:
    served = ServedModel(None, encoding, "m", sampling=SamplingParams(temperature=0.3, top_k=20, max_tokens=500))  # type: ignore[arg-type]
    options = turn_options(HarmonyRequest(), served, {"top_p": 0.8, "max_tokens": 9})
    assert options.sampling == SamplingParams(temperature=0.3, top_k=20, top_p=0.8, max_tokens=9)
    assert turn_options(HarmonyRequest(), served).sampling == served.sampling


def test_top_k_and_min_p_of_a_chat_request_reach_the_backend(encoding: HarmonyEncoding) -> None:
    backend = PromptRecordingReplay([ids(encoding, ANSWER)] * 2, name="replay-model")
    backend.load()
    served = ServedModel(backend, encoding, "replay-model", sampling=SamplingParams(top_k=20), start_date=DATE)
    with running(served) as server:
        client = server.client()
        client.chat.completions.create(
            model="replay-model", messages=USER, extra_body={"top_k": 40, "min_p": 0.05}, top_p=0.9
        )
        client.chat.completions.create(model="replay-model", messages=USER)
    asked, plain = backend.samplings
    assert (asked.top_k, asked.min_p, asked.top_p) == (40, 0.05, 0.9)
    assert (plain.top_k, plain.min_p, plain.top_p) == (20, 0.0, 1.0)  # the server's own


@pytest.mark.parametrize(
    ("extra", "param"), [({"top_k": -2}, "top_k"), ({"min_p": 1.5}, "min_p"), ({"seed": 2**64}, "seed")]
)
def test_sampling_values_out_of_bounds_are_400(encoding: HarmonyEncoding, extra: dict[str, Any], param: str) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running_server, pytest.raises(BadRequestError) as refused:
        running_server.client().chat.completions.create(model="replay-model", messages=USER, extra_body=extra)
    assert refused.value.param == param, refused.value.message
    assert backend.prompts == []


def test_max_output_tokens_of_a_response_is_the_turns_max_tokens(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running_server:
        running_server.client().responses.create(model="replay-model", input="Hi", max_output_tokens=77)
    (sampling,) = backend.samplings
    assert sampling.max_tokens == 77
