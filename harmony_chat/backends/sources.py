"""Where a model comes from: a local path, or a file in a Hugging Face repository.

Downloads go through huggingface-hub into its own cache (with its progress bar), so a model
fetched once is found again offline.
"""

from __future__ import annotations

from pathlib import Path

from harmony_chat.errors import DownloadError, ModelError

GPT_OSS_20B_REPO = "ggml-org/gpt-oss-20b-GGUF"
"""A Hugging Face repository with a gpt-oss-20b GGUF."""
GPT_OSS_20B_FILE = "gpt-oss-20b-mxfp4.gguf"
"""The file to fetch from :data:`GPT_OSS_20B_REPO` (about 12 GB)."""
DOWNLOAD_COMMAND = f"harmony-chat ask --hf-repo {GPT_OSS_20B_REPO} --hf-file {GPT_OSS_20B_FILE} 'Hello'"
"""A command a newcomer can copy to download gpt-oss-20b and try it."""


def download_from_hub(repo: str, filename: str) -> Path:
    """Download ``filename`` from the Hugging Face repository ``repo`` (or find it in the cache).

    A file already in the cache is used without asking the Hub. Otherwise one quick request
    (no retries) checks that the Hub answers first: huggingface-hub would otherwise retry a
    network failure for about 23 seconds, logging every try, before giving up.

    Raises:
        DownloadError: one line saying why it could not be fetched.
    """
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
        from huggingface_hub.errors import (
            EntryNotFoundError,
            HfHubHTTPError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
        )
    except ImportError as error:  # pragma: no cover - a declared dependency
        raise DownloadError(f"huggingface-hub is not installed ({error})") from error
    unreachable = f"{repo}/{filename} is not in the local Hugging Face cache and the Hub cannot be reached"
    try:
        return Path(hf_hub_download(repo_id=repo, filename=filename, local_files_only=True))
    except LocalEntryNotFoundError:
        pass  # not cached yet: download it
    except OSError as error:
        raise DownloadError(f"cannot read {repo}/{filename} from the Hugging Face cache: {error}") from error
    try:
        get_hf_file_metadata(hf_hub_url(repo, filename))
        return Path(hf_hub_download(repo_id=repo, filename=filename))
    except OfflineModeIsEnabled as error:
        raise DownloadError(f"{unreachable} (HF_HUB_OFFLINE is set)") from error
    except LocalEntryNotFoundError as error:
        raise DownloadError(unreachable) from error
    except RepositoryNotFoundError as error:
        raise DownloadError(f"Hugging Face repository {repo!r} not found (or it is private)") from error
    except EntryNotFoundError as error:
        raise DownloadError(f"{filename!r} is not in Hugging Face repository {repo!r}") from error
    except HfHubHTTPError as error:
        raise DownloadError(f"download of {repo}/{filename} failed: {str(error).splitlines()[0]}") from error
    except OSError as error:
        raise DownloadError(f"download of {repo}/{filename} failed: {error}") from error
    except Exception as error:  # the transport's own errors (httpx or requests, by huggingface-hub version)
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DownloadError(f"{unreachable} ({reason})") from error


def resolve_model(model: Path | None, hf_repo: str | None, hf_file: str | None) -> Path | None:
    """Return the model file named by ``--model`` or ``--hf-repo``/``--hf-file`` (None if neither).

    Raises:
        ModelError: when the options contradict each other or are incomplete.
        DownloadError: when a download fails.
    """
    if model is not None and (hf_repo or hf_file):
        raise ModelError("give either --model or --hf-repo/--hf-file, not both")
    if bool(hf_repo) != bool(hf_file):
        raise ModelError("--hf-repo and --hf-file go together")
    if hf_repo and hf_file:
        return download_from_hub(hf_repo, hf_file)
    if model is None:
        return None
    path = model.expanduser()
    if not path.exists():  # said while finding the model, before any step that would load it
        raise ModelError(f"model file not found: {path}")
    return path
