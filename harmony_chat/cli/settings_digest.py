"""Generated from the settings by ``python -m harmony_chat.config_reference --write``: do not edit.

Each setting's path: the kind of value it takes (``int``, ``float``, ``str``, ``bool``, ``list`` of
strings), the values it allows (a Literal's; none: any), and its help (the field's docstring). The
command line's flags read it instead of the settings model, so ``--help`` loads no pydantic.
"""

# ruff: noqa: E501

SETTINGS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "model.path": (
        "str",
        (),
        "A gpt-oss GGUF file (~ is expanded). Without one the app and serve run the pocket gpt-oss; ask needs one (or --demo).",
    ),
    "model.hf_repo": (
        "str",
        (),
        "A Hugging Face repository to download the model from (with hf_file).",
    ),
    "model.hf_file": (
        "str",
        (),
        "The file in hf_repo to download (kept in the Hugging Face cache).",
    ),
    "model.context": (
        "int",
        (),
        "Context size in tokens (the model's own limit applies too).",
    ),
    "model.gpu_layers": (
        "int",
        (),
        "Layers to offload to the GPU (-1: all; a count above the model's also offloads all).",
    ),
    "model.threads": (
        "int",
        (),
        "CPU threads (default: llama.cpp's choice; 512 is the most it runs).",
    ),
    "model.url": (
        "str",
        (),
        "A serving engine running gpt-oss (llama-server, vLLM, SGLang) instead of a GGUF: http://HOST:PORT.",
    ),
    "model.engine": (
        "str",
        ("llama-server", "vllm", "sglang"),
        "The engine at url (default: found out by asking it).",
    ),
    "model.api_key": (
        "str",
        (),
        "The engine's API key, sent as a Bearer token (better: the HARMONY_CHAT_API_KEY variable).",
    ),
    "model.served_model": (
        "str",
        (),
        "The model name the engine serves, where it needs one (vLLM, SGLang).",
    ),
    "sampling.temperature": (
        "float",
        (),
        "Sampling temperature, as OpenAI's API takes it (1.0 with top_p 1.0 is OpenAI's advice for gpt-oss).",
    ),
    "sampling.top_p": (
        "float",
        (),
        "Nucleus sampling: sample from the most likely tokens whose probabilities add up to top_p (1.0: off).",
    ),
    "sampling.top_k": (
        "int",
        (),
        "Sample from the k most likely tokens only (0: off).",
    ),
    "sampling.min_p": (
        "float",
        (),
        "Sample only from tokens at least min_p times as likely as the most likely one (0.0: off).",
    ),
    "sampling.seed": (
        "int",
        (),
        "Sampling seed, for repeatable answers (llama.cpp's seeds are 32-bit).",
    ),
    "sampling.max_tokens": (
        "int",
        (),
        "Most tokens an answer may take (less when the context has less room).",
    ),
    "sampling.frequency_penalty": (
        "float",
        (),
        "OpenAI's frequency penalty: a token is less likely the more often it was generated (0.0: off).",
    ),
    "sampling.presence_penalty": (
        "float",
        (),
        "OpenAI's presence penalty: a token is less likely once it was generated (0.0: off).",
    ),
    "chat.effort": (
        "str",
        ("low", "medium", "high"),
        "Reasoning effort of a new chat: low, medium or high.",
    ),
    "chat.instructions": (
        "str",
        (),
        "Developer instructions for every chat.",
    ),
    "ui.theme": (
        "str",
        (),
        "Colour theme: a shipped one, one of yours in the themes folder, or a Textual theme.",
    ),
    "ui.debug": (
        "bool",
        (),
        "Start in debug mode (analysis and token inspector visible).",
    ),
    "ui.cursor_blink": (
        "bool",
        (),
        "Blink the prompt's cursor.",
    ),
    "ui.reasoning": (
        "str",
        ("hidden", "summary", "raw"),
        "What you see of the model's reasoning: hidden (a thinking line), summary (a short account the model writes for you after it thinks; costs an extra generation per turn, see [reasoning]), or raw (the raw chain of thought, not reviewed for safety: for debugging). The app's only: ask shows reasoning only when its own --reasoning asks.",
    ),
    "reasoning.summarizer": (
        "str",
        (),
        '"same": the chat\'s own model writes the summaries, reusing its KV cache; or the URL of a serving engine running gpt-oss (llama-server, vLLM, SGLang) that writes them instead.',
    ),
    "reasoning.live": (
        "bool",
        (),
        "Also summarise long reasoning while it goes on, every live_every analysis tokens.",
    ),
    "reasoning.live_every": (
        "int",
        (),
        "Analysis tokens between two live summaries.",
    ),
    "history.path": (
        "str",
        (),
        "The SQLite file (default: history.sqlite3 in the user data dir).",
    ),
    "history.store_analysis": (
        "bool",
        (),
        "Also store the raw chain of thought, labelled, for debugging.",
    ),
    "tools.approve": (
        "str",
        ("ask", "all", "none"),
        "ask before every call, run all without asking, or run none (the model is told it was declined).",
    ),
    "tools.always": (
        "list",
        (),
        'Tools that run without asking, as server.tool (the approval dialog\'s "always, saved" adds to it).',
    ),
    "tools.max_steps": (
        "int",
        (),
        "Generation calls per turn at most; each tool result starts one more.",
    ),
    "tools.timeout": (
        "float",
        (),
        "Seconds a function tool (MCP) may run before it is stopped (at most a day).",
    ),
    "tools.builtin": (
        "list",
        ("python", "browser"),
        "gpt-oss's built-in tools to turn on: python (a contained Jupyter kernel), browser (search and read).",
    ),
    "tools.python_timeout": (
        "float",
        (),
        "Seconds one python call may run (at most a day).",
    ),
    "tools.python_disk_mb": (
        "int",
        (),
        "MiB the python tool's working folder and its /tmp may hold together (past it, writes fail and the model is told); in the bubblewrap sandbox a tmpfs of this size, so memory, kept on disk between calls.",
    ),
    "tools.python_runner": (
        "str",
        ("bubblewrap", "container"),
        "What contains the python tool: bubblewrap (Linux; needs bwrap and libseccomp) or a container of python_container_engine (docker or podman; macOS needs this).",
    ),
    "tools.python_container_engine": (
        "str",
        ("docker", "podman"),
        'The container engine when python_runner = "container".',
    ),
    "tools.python_container_image": (
        "str",
        (),
        'The image when python_runner = "container": it needs Python with ipykernel.',
    ),
    "tools.browser.provider": (
        "str",
        ("searxng", "exa", "you"),
        "Search provider: a SearXNG instance (url, no key), Exa (EXA_API_KEY) or You.com (YDC_API_KEY).",
    ),
    "tools.browser.url": (
        "str",
        (),
        "The SearXNG instance, e.g. http://127.0.0.1:8888.",
    ),
    "tools.browser.allow_private": (
        "bool",
        (),
        "Let the browser open loopback and private-network addresses (off: only public hosts).",
    ),
    "mcp.import_file": (
        "str",
        (),
        'A JSON file in other MCP clients\' {"mcpServers": {...}} form to read servers from (as import).',
    ),
}
