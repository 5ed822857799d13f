"""The checks on the committed recordings: what each engine gets right and wrong, with the evidence.

``serve-demo.json``, ``llama-server.json`` and the two vLLM ones were recorded live (``--record``);
the SGLang and Ollama ones were written from their source (``fixtures/README.md`` cites the files).
"""

from __future__ import annotations

from harmony_chat.conform.checks import CHECKS
from harmony_chat.conform.result import Status
from tests.conform.conftest import LLAMA_SERVER_FAILS, evidence, replay, statuses

PASS, FAIL, INCONCLUSIVE = Status.PASS, Status.FAIL, Status.INCONCLUSIVE


def _only(audit_statuses: dict[str, Status], status: Status) -> set[str]:
    return {check for check, found in audit_statuses.items() if found is status}


def test_serve_demo_recording_passes_every_check() -> None:
    audit = replay("serve-demo")
    assert set(statuses(audit).values()) == {PASS}
    assert "preamble in content" in evidence(audit, "chat.tools.preamble")


def test_llama_server_recording_fails_what_llama_cpp_does_its_own_way() -> None:
    audit = replay("llama-server")
    found = statuses(audit)
    assert _only(found, FAIL) == set(LLAMA_SERVER_FAILS)
    assert set(found.values()) == {PASS, FAIL}
    for check, piece in LLAMA_SERVER_FAILS.items():
        assert piece in evidence(audit, check), check
    assert "bad_role: HTTP 200 (accepted" in evidence(audit, "chat.errors")
    assert "lacks sequence_number, output_index, content_index" in evidence(audit, "responses.reasoning.stream")


def test_vllm_passes_all_but_exclude_and_continuing_without_a_store() -> None:
    audit = replay("vllm")  # vLLM 0.32.0 (CPU) started with --tool-call-parser openai --enable-auto-tool-choice
    found = statuses(audit)
    assert _only(found, FAIL) == {"chat.reasoning.exclude", "responses.continue"}
    assert set(found.values()) == {PASS, FAIL}
    assert "reasoning still came as message.reasoning" in evidence(audit, "chat.reasoning.exclude")
    assert "HTTP 404 (Response with id 'resp_" in evidence(audit, "responses.continue")
    assert "101 = 101" in evidence(audit, "chat.cot.dropped") and "(+30)" in evidence(audit, "chat.cot.kept")
    assert evidence(audit, "chat.effort").startswith("reasoning tokens:")  # usage.completion_tokens_details


def test_vllm_without_the_tool_flags_drops_chat_tool_calls_and_conform_says_which_flags() -> None:
    """With vLLM's default flags the model stops on <|call|>, the chat endpoint returns only the preamble."""
    audit = replay("vllm-default-flags")
    found = statuses(audit)
    assert _only(found, FAIL) == {
        "chat.reasoning.exclude",
        "chat.tools.call",
        "chat.tools.stream",
        "responses.continue",
    }
    assert _only(found, INCONCLUSIVE) == {"chat.tools.result", "chat.tools.preamble"}
    for check in ("chat.tools.call", "chat.tools.stream"):
        why = evidence(audit, check)
        assert "stopped on <|call|>, stop_reason 200012" in why, why
        assert "start vLLM with `--tool-call-parser openai --enable-auto-tool-choice`" in why
    assert found["responses.tools.call"] is PASS  # its Responses endpoint parses calls either way


def test_sglang_names_reasoning_reasoning_content_and_sends_flat_errors() -> None:
    audit = replay("sglang", apis=("chat",))
    found = statuses(audit)
    assert _only(found, FAIL) == {"chat.reasoning", "chat.reasoning.stream", "chat.reasoning.exclude", "chat.errors"}
    assert "came as message.reasoning_content (DeepSeek's name" in evidence(audit, "chat.reasoning")
    assert "delta.reasoning_content" in evidence(audit, "chat.reasoning.stream")
    assert evidence(audit, "chat.errors").count("a flat error object") == 4
    for check in ("chat.cot.dropped", "chat.cot.kept", "chat.effort"):  # what its source does not settle
        assert found[check] is INCONCLUSIVE and "not in the recording" in evidence(audit, check)
    assert found["chat.tools.call"] is PASS and found["chat.structured"] is PASS


def test_ollama_fails_the_responses_reasoning_item_and_continuation() -> None:
    audit = replay("ollama")
    found = statuses(audit)
    assert _only(found, FAIL) == {
        "chat.reasoning.exclude",
        "chat.errors",
        "responses.reasoning",
        "responses.reasoning.stream",
        "responses.continue",
        "responses.errors",
    }
    assert "bad_role: HTTP 200 (accepted, not a 4xx)" in evidence(audit, "chat.errors")
    reasoning_item = evidence(audit, "responses.reasoning")
    assert "the item has no content" in reasoning_item and "the raw CoT is sent as summary text" in reasoning_item
    assert "response.reasoning_summary_text.delta" in evidence(audit, "responses.reasoning.stream")
    assert "previous_response_id ignored: input_tokens 75" in evidence(audit, "responses.continue")
    assert found["chat.reasoning"] is PASS and found["chat.reasoning.stream"] is PASS


def test_every_check_cites_a_clause_and_ids_are_unique() -> None:
    ids = [check.id for check in CHECKS]
    assert len(ids) == len(set(ids)) == 28
    for check in CHECKS:
        assert check.clause.section and check.clause.rule and check.id.startswith(check.api + ".")
