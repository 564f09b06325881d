"""Model loading: local directories, the Hugging Face cache, clear errors."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from derender import DEFAULT_MODEL_DIR, Derenderer


def make_hub_cache(root: Path, model_id: str) -> Path:
    """Lay out `root` the way huggingface_hub stores a snapshot."""
    repo = root / f"models--{model_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / "0123abcd"
    shutil.copytree(DEFAULT_MODEL_DIR, snapshot)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abcd")
    return snapshot


def test_model_id_resolves_from_hf_hub_cache(tmp_path, monkeypatch):
    snapshot = make_hub_cache(tmp_path / "hub", "Qwen/Qwen3-8B")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    core = Derenderer("Qwen/Qwen3-8B")
    assert core.model_path == str(snapshot)
    assert core.served_model_names == ["Qwen/Qwen3-8B"]
    assert core.vocab_size == 151669


def test_model_id_resolves_from_hf_home(tmp_path, monkeypatch):
    make_hub_cache(tmp_path / "home" / "hub", "org/name")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert Derenderer("org/name").max_model_len == 40960


def test_download_dir_is_the_cache_a_model_id_is_found_in(tmp_path, monkeypatch):
    """vLLM loads a model id's tokenizer with cache_dir=--download-dir."""
    from derender.cli import use_download_dir

    snapshot = make_hub_cache(tmp_path / "downloads", "org/elsewhere")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "default"))
    with pytest.raises(ValueError):
        Derenderer("org/elsewhere")
    use_download_dir(str(tmp_path / "downloads"))
    assert Derenderer("org/elsewhere").model_path == str(snapshot)


def test_only_the_asked_revision_is_served(tmp_path, monkeypatch):
    """As huggingface_hub offline: `refs/<revision>` names the snapshot, or the
    revision is a commit; a cache without it is not searched for another one."""
    snapshot = make_hub_cache(tmp_path / "hub", "org/name")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    (tmp_path / "hub" / "models--org--name" / "refs" / "main").unlink()
    with pytest.raises(ValueError, match="not in the local Hugging Face cache"):
        Derenderer("org/name")
    assert Derenderer("org/name", revision="0123abcd").model_path == str(snapshot)
    with pytest.raises(ValueError, match="at revision `v2`"):
        Derenderer("org/name", revision="v2")


def test_missing_model_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ValueError) as err:
        Derenderer("nobody/nothing")
    message = str(err.value)
    assert "nobody/nothing" in message
    assert str(tmp_path / "models--nobody--nothing") in message


def test_directory_without_tokenizer_is_refused(tmp_path):
    with pytest.raises(ValueError, match="has no tokenizer.json"):
        Derenderer(str(tmp_path))


def test_max_model_len_flag_overrides_config():
    assert Derenderer(str(DEFAULT_MODEL_DIR), max_model_len=512).max_model_len == 512


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "derender.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_refuses_unknown_parsers_with_vllms_message():
    out = run_cli("--reasoning-parser", "nope", "--port", "1")
    assert out.returncode != 0
    assert "reasoning_parser_name='nope' has not been registered" in out.stderr


def test_cli_requires_tool_parser_for_auto_tool_choice():
    out = run_cli("--enable-auto-tool-choice", "--port", "1")
    assert out.returncode != 0
    assert "--enable-auto-tool-choice requires --tool-call-parser" in out.stderr


def test_cli_reports_a_missing_model():
    out = run_cli("/nonexistent/model-dir", "--port", "1")
    assert out.returncode != 0
    assert "cannot start" in out.stderr
