"""The Lua filter that removes soft breaks inside Chinese text, run by the real Pandoc.

Quarto is not installable here; Pandoc is (PyPI `pypandoc-binary` ships Pandoc 3.9, the version
Quarto 1.10 bundles), and Quarto runs the same filter through the same Pandoc.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from grader.build import ROOT

FILTER = ROOT / "assets" / "filters" / "cjk-softbreak.lua"


def _pandoc() -> str | None:
    try:
        import pypandoc
    except ImportError:
        return shutil.which("pandoc")
    try:
        return pypandoc.get_pandoc_path()
    except OSError:
        return shutil.which("pandoc")


PANDOC = _pandoc()
needs_pandoc = pytest.mark.skipif(PANDOC is None, reason="no pandoc: pip install pypandoc-binary")


def to_plain(markdown: str, *, with_filter: bool = True) -> str:
    cmd = [PANDOC, "-f", "markdown", "-t", "plain", "--wrap=none"]
    if with_filter:
        cmd += ["--lua-filter", str(FILTER)]
    run = subprocess.run(cmd, input=markdown, capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr == "", run.stderr  # a Lua error is a warning on stderr, not an exit status
    return run.stdout.strip()


def test_the_book_runs_the_filter():
    config = yaml.safe_load((ROOT / "_quarto.yml").read_text(encoding="utf-8"))
    assert "assets/filters/cjk-softbreak.lua" in config["filters"]
    assert FILTER.is_file()


@needs_pandoc
def test_without_the_filter_pandoc_inserts_the_space():
    assert to_plain("正确性的\n证明", with_filter=False) == "正确性的 证明"  # the problem being fixed


@needs_pandoc
@pytest.mark.parametrize("source, expected", [
    ("正确性的\n证明", "正确性的证明"),                      # ideograph | ideograph
    ("先推导，\n再验证", "先推导，再验证"),                    # full-width comma | ideograph
    ("草稿被拒绝\n（见下文）", "草稿被拒绝（见下文）"),          # ideograph | full-width parenthesis
    ("见「残差」\n一节", "见「残差」一节"),                     # corner bracket | ideograph
    ("这是\n**加粗**的词", "这是**加粗**的词"),                 # looks inside Strong
    ("读\n[源码](https://example.org)", "读源码"),
    ("**规则。** 设草稿", "规则。设草稿"),                       # a typed space after full-width punctuation              # looks inside Link (plain drops the URL)
])
def test_soft_breaks_inside_chinese_text_are_dropped(source, expected):
    assert to_plain(source).replace("\n", "") == expected.replace("**", "")


@needs_pandoc
@pytest.mark.parametrize("source, expected", [
    ("English words\nstay apart", "English words stay apart"),
    ("调用\n`apply_sampling_params`", "调用 apply_sampling_params"),  # next to inline code: a space
    ("target\n分布", "target 分布"),                                   # Latin | ideograph: a space
    ("概率\n$p$", "概率 p"),                                          # next to math: a space
    ("两个 token 之间", "两个 token 之间"),                            # typed spaces around Latin words
    ("代码映射 参考答案", "代码映射 参考答案"),                        # a typed space between ideographs
])
def test_other_soft_breaks_stay_spaces(source, expected):
    assert to_plain(source) == expected


@needs_pandoc
def test_hard_breaks_and_paragraphs_are_untouched():
    out = to_plain("第一段\n\n第二段\\\n换行")
    assert out.splitlines() == ["第一段", "", "第二段", "换行"]


@needs_pandoc
def test_the_lesson_has_no_space_left_between_chinese_characters():
    lesson = (ROOT / "lessons" / "lesson07.qmd").read_text(encoding="utf-8")
    # Plain Pandoc does not know Quarto's executable fences (```{python}): make them code blocks.
    lesson = re.sub(r"^```\{(\w+)[^}]*\}", r"``` {.\1}", lesson, flags=re.M)
    html = subprocess.run([PANDOC, "-f", "markdown", "-t", "html", "--wrap=none", "--lua-filter", str(FILTER)],
                          input=lesson, capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert html.returncode == 0, html.stderr
    prose = re.sub(r"<pre.*?</pre>", "", html.stdout, flags=re.S)  # code may space its comments freely
    prose = re.sub(r"<[^>]+>", "", prose)                            # attributes (callout titles) too
    wide = "[\u4e00-\u9fff，。；：、（）「」]"
    leftovers = re.findall(f"{wide} +{wide}", prose)  # --wrap=none: a kept soft break is a space
    assert leftovers == [], leftovers[:10]
