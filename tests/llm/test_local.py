"""The ``local`` provider with the real Gemma 3 270M on the CPU (marked ``local_model``: loads the model
once per session; the first load ever converts the GGUF, later ones read the cached copy), plus its errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.config import LLMRunnerConfig, LLMSettings
from assay.errors import ConfigError
from assay.install import install_hint
from assay.llm import LLMError, local_model, make_llm
from assay.llm.local import LocalChatModel, parse_options
from assay.llm.local_model import cache_root, default_threads, find_source, forget_loaded, load_engine
from tests.extras import need

SENTIMENT = (
    "Review: The food was cold and the waiter was rude.\nSentiment: negative\n\n"
    "Review: Loved every minute, would come back!\nSentiment: positive\n\n"
    "Review: {review}\nSentiment:"
)


def local(spec: str = "gemma3-270m", **settings: object) -> LocalChatModel:
    model = make_llm(LLMSettings(model=f"local:{spec}", **settings), cache_dir=None, use_cache=False)
    assert isinstance(model, LocalChatModel)
    return model


def ask(model: LocalChatModel, text: str, **kwargs: object):
    return asyncio.run(model.complete([{"role": "user", "content": text}], **kwargs))  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def gemma() -> LocalChatModel:
    """Greedy Gemma 3 270M that stops at a newline, loaded once for the session."""
    need("local")
    model = local("gemma3-270m?stop=%0A", max_tokens=4)
    ask(model, "Hello")
    return model


@pytest.mark.local_model
def test_greedy_labels_reviews_and_is_deterministic(gemma: LocalChatModel) -> None:
    first = ask(gemma, SENTIMENT.format(review="Terrible service, never again."))
    assert first.text == "negative"
    assert first.model == "local:gemma3-270m" and first.cost_usd == 0 and not first.cached
    assert first.tokens_in > 30 and 1 <= first.tokens_out <= 4
    again = [ask(gemma, SENTIMENT.format(review="Terrible service, never again.")).text for _ in range(2)]
    assert again == ["negative", "negative"]
    assert (
        ask(gemma, SENTIMENT.format(review="A wonderful evening, the staff were lovely.")).text == "positive"
    )


@pytest.mark.local_model
def test_sampling_varies_with_the_seed_and_repeats_with_the_same_seed(gemma: LocalChatModel) -> None:
    prompt = "Write one sentence about the sea:"
    texts = {
        seed: ask(local(f"gemma3-270m?seed={seed}", max_tokens=4), prompt, temperature=1.0).text
        for seed in range(3)
    }
    assert len(set(texts.values())) >= 2, texts
    assert ask(local("gemma3-270m?seed=2", max_tokens=4), prompt, temperature=1.0).text == texts[2]
    seeded = local("gemma3-270m?seed=2", max_tokens=4)
    samples = {ask(seeded, prompt, temperature=1.0, sample=n).text for n in range(1, 4)}
    assert len(samples | {texts[2]}) >= 2  # repeated samples of one request differ, as judges' votes need


@pytest.mark.local_model
def test_max_tokens_and_stop_strings(gemma: LocalChatModel) -> None:
    long = ask(local("gemma3-270m"), "The capital of France is Paris. The capital of Italy is", max_tokens=5)
    assert long.tokens_out == 5 and long.text
    stopped = ask(local("gemma3-270m?stop=.&stop=%0A"), "Count: one, two, three, four,", max_tokens=8)
    assert "." not in stopped.text and "\n" not in stopped.text


@pytest.mark.local_model
def test_concurrent_calls_share_the_model_and_agree_with_sequential_ones(gemma: LocalChatModel) -> None:
    reviews = ["Broken on arrival.", "Best pizza in town!", "Rude staff and dirty tables.", "Lovely hotel."]

    async def all_at_once() -> list[str]:
        answers = await asyncio.gather(
            *(gemma.complete([{"role": "user", "content": SENTIMENT.format(review=r)}]) for r in reviews)
        )
        return [a.text for a in answers]

    together = asyncio.run(all_at_once())
    assert together == [ask(gemma, SENTIMENT.format(review=r)).text for r in reviews]
    assert together == ["negative", "positive", "negative", "positive"]


@pytest.mark.local_model
def test_a_later_load_reads_the_converted_copy(gemma: LocalChatModel, monkeypatch) -> None:
    source = find_source("gemma3-270m")
    folder = cache_root() / source.cache_name
    assert (folder / "model.safetensors").is_file() and (folder / "config.json").is_file()
    assert not list(folder.glob("*.gguf"))  # the assembled GGUF is not kept

    def no_conversion(*args: object) -> None:
        raise AssertionError("converted again")

    monkeypatch.setattr(local_model, "_convert", no_conversion)
    forget_loaded()
    engine = load_engine(source, default_threads())
    assert engine.count_tokens("Hello world") >= 2


def test_options_parse_and_bad_ones_fail_on_the_model_field() -> None:
    options = parse_options("gemma3-270m?stop=%0A&stop=END&seed=7&threads=2&chat=1")
    assert (options.name, options.stop, options.seed, options.threads, options.chat) == (
        "gemma3-270m", ("\n", "END"), 7, 2, True,
    )  # fmt: skip
    for spec, message in [
        ("gemma3-270m?temp=1", "unknown option 'temp'"),
        ("gemma3-270m?seed=x", "option seed must be an integer"),
        ("gemma3-270m?threads=0", "option threads must be at least 1"),
        ("nonexistent-model", "unknown local model 'nonexistent-model'"),
        ("/no/such/file.gguf", "a .gguf file or a transformers model directory"),
    ]:
        with pytest.raises(ConfigError, match=r"runner\.model") as info:
            make_llm(
                LLMRunnerConfig(model=f"local:{spec}"), cache_dir=None, use_cache=False, section="runner"
            )
        assert message in str(info.value) and "\n" not in str(info.value)


def test_a_model_that_cannot_load_fails_each_call_with_one_line(tmp_path: Path) -> None:
    need("local")
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    model = local(str(broken), max_tokens=2)
    for _ in range(2):  # the second call fails at once with the remembered reason
        with pytest.raises(LLMError, match=r"cannot load local model .*broken-model") as info:
            ask(model, "Hi")
        assert "\n" not in str(info.value)


def test_a_missing_extra_is_a_config_error_with_the_install_line(tmp_path: Path) -> None:
    script = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers", "gguf"):
            raise ImportError(name)
sys.meta_path.insert(0, Block())
from assay.config import LLMSettings
from assay.errors import ConfigError
from assay.install import install_hint
from assay.llm import make_llm
try:
    make_llm(LLMSettings(model="local:" + sys.argv[1]), cache_dir=None, use_cache=False, section="judge")
except ConfigError as exc:
    print(exc)
"""
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "model")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("judge.model: the local provider needs torch, transformers")
    assert install_hint("local") in done.stdout
