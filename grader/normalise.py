"""Normalisation of free-text answers, before any rule sees them. Pure.

`clean` keeps the answer readable (for quoting): Unicode subscripts as `_` subscripts (xⱼ -> x_j), superscript
digits as powers (x² -> x^2, so a footnote mark does not glue onto the word before it), NFKC
(full-width letters, digits and punctuation become ASCII; ⁄ ∕ ÷ a slash), every invisible character removed (zero-width spaces and joiners, soft hyphens, bidi
marks, BOM: Unicode category Cf, plus the variation selectors), one kind of dash, one kind of
space. `plain` is what the rules match: `clean`, then markdown markup and LaTeX markup turned into
plain text and plain math (`\\min\\{a, b\\}` -> `min(a, b)`, `\\frac{a}{b}` -> `(a)/(b)`, `\\cdot` -> `·`,
`\\sum_v` -> `Σ_v`, `\\left(` -> `(`), Traditional Chinese as Simplified (`simplified`), lower case,
single spaces with line breaks kept, and `spelled_out`: the field's chat jargon (drf, tgt) spelled out and the
rhetorical questions that assert (还不是因为…, 哪回不是…) read as the assertions they are.

`simplified` converts Traditional to Simplified Chinese with zhconv (a real, phrase-aware conversion)
when it is installed and the text has a Traditional character (its phrase table also rewrites some Simplified
text: 什么正好 -> 什幺正好), else with a compact character table of the characters this course's answers
use (`_HANT_FALLBACK`, pairs of traditional, simplified), and written Cantonese (係, 嘅, 唔, 冇, 咗 …) and the
Japanese terms of students who write Chinese as a second language (確率, 棄却, 同時分布, katakana loanwords) as
Mandarin.
"""
from __future__ import annotations

import functools
import re
import unicodedata

_DASHES = dict.fromkeys(map(ord, "−–—‐‑‒﹣⁃"), "-")
_QUOTES = {ord("“"): '"', ord("”"): '"', ord("‘"): "'", ord("’"): "'"}
_DOTS = dict.fromkeys(map(ord, "・･•∙⋅"), "·")     # every middle dot a product dot
_SLASHES = dict.fromkeys(map(ord, "⁄∕÷"), "/")      # the fraction slash, the division slash and ÷ divide
_SPACES = re.compile(r"[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
_WHITESPACE = re.compile(r"\s+")


def _invisible(ch: str) -> bool:
    code = ord(ch)
    return unicodedata.category(ch) == "Cf" or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or code == 0x034F


# Unicode subscripts (xⱼ, pᵢ, x₁, yⱼ₋₁) as the underscore subscripts students also type (x_j, p_i, x_1, y_j-1);
# NFKC alone would run them into the letter (xj).
_SUBSCRIPTS = re.compile("[\u2080-\u209c\u1d62-\u1d6a\u2c7c]+")
_SUPERSCRIPT_DIGITS = re.compile("[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+")     # x² -> x^2, a footnote mark name¹ -> name^1


# Circled numbers (① … ⑳) number steps: "(1) ", not the digit NFKC makes of them (④ P(y) = … is no 4·P(y)).
_CIRCLED = re.compile("[\u2460-\u2473]")


# Combining accents left on a Latin letter after NFKC (there is no precomposed p̃).
_LATIN_MARK = re.compile(r"(?<=[A-Za-z])[\u0300-\u036f]+")


def clean(text: str | None) -> str:
    """NFKC, invisible characters removed, one dash, ordinary spaces; case and markup kept."""
    text = _CIRCLED.sub(lambda m: f"({ord(m[0]) - 0x245f}) ", text or "")
    text = _SUBSCRIPTS.sub(lambda m: "_" + m[0], text)
    text = _SUPERSCRIPT_DIGITS.sub(lambda m: "^" + m[0], text)
    text = text.replace("\u207a", "_+")                       # a superscript plus, (p − q)⁺: the positive part
    text = re.sub(r"(?<=[A-Za-z)\]])\u207b(?![\u00b9\u00b2\u00b3\u2070\u2074-\u2079^])", "_-", text)   # D⁻: the negative part (not x⁻¹)
    text = unicodedata.normalize("NFKC", text)
    text = _LATIN_MARK.sub("", text)                          # p̃, q̂, x̄: the letter (as \tilde p reads as p)
    text = "".join(ch for ch in text if not _invisible(ch) and (ch in "\n\t" or unicodedata.category(ch) != "Cc"))
    text = text.translate(_DASHES).translate(_QUOTES).translate(_DOTS).translate(_SLASHES)
    return _SPACES.sub(" ", text)


# --- LaTeX -> plain math -----------------------------------------------------------------------------
_LATEX_SYMBOLS = {
    "cdot": "·", "times": "·", "ast": "*", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "sum": "Σ", "prod": "∏", "mid": "|", "vert": "|", "lvert": "|", "rvert": "|", "in": "∈", "equiv": "≡", "to": "→", "rightarrow": "→",
    "Rightarrow": "⇒", "implies": "⇒", "infty": "∞", "alpha": "α", "gamma": "γ", "beta": "β", "approx": "≈",
    "dots": "...", "ldots": "...", "cdots": "...", "quad": " ", "qquad": " ", "lt": "<", "gt": ">", "sim": "~",
    "propto": "∝", "forall": "∀", "neg": "¬", "lbrace": "(", "rbrace": ")", "langle": "(", "rangle": ")",
    "leftrightarrow": "↔", "Leftrightarrow": "⇔", "longrightarrow": "→", "Longrightarrow": "⇒", "mapsto": "→",
    "iff": "⇔", "blacksquare": " ", "square": " ", "qed": " ", "Box": " ", "wedge": "∧", "land": "∧", "vee": "∨",
    "lor": "∨",
}
_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)[lr]?(?![a-zA-Z])\s*(\\[{}|.]|[()\[\]|.])?")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\w)\s*(\w)")
_WORD = re.compile(r"\\(?:text|mathrm|mathbf|mathit|mathcal|mathbb|operatorname|boldsymbol|textbf|textit|emph|texttt)"
                   r"\s*\{([^{}]*)\}")
# Accents and font switches on one letter or group: \tilde r, \hat{p}, \bar q, {\rm rej} -> the letter or word.
_ACCENT = re.compile(r"\\(?:tilde|hat|bar|widetilde|widehat|overline|check|dot|ddot|vec)\s*(?:\{([^{}]*)\}|([A-Za-z]))")
_FONT_GROUP = re.compile(r"\{\\(?:rm|bf|it|sf|tt)\s+([^{}]*)\}")
_WORD_LETTER = re.compile(r"\\(?:mathrm|mathbf|mathit|mathcal|mathbb|boldsymbol|rm|bf)\s*([A-Za-z0-9])(?![A-Za-z0-9])")   # \mathbb P, \mathbf 1
# Display environments (align, aligned, eqnarray, gather, equation, split): their markup goes; the alignment
# marks (&, and && before a row's note) go; a row that opens with a relation continues the row above.
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{(?:align|aligned|alignat|eqnarray|gather|gathered|equation|split|multline|cases|array)\*?\}(?:\{[^{}]*\})?")
_ALIGN_NOTE = re.compile(r"&&[^\n&]*?(?=\\\\|\n|$)")
_PLUS_PART = re.compile(r"(\))\s*_\s*\{\s*\+\s*\}")
_COMMAND = re.compile(r"\\([a-zA-Z]+)")
_SUBSCRIPT_GROUP = re.compile(r"([_^])\{([^{}]*)\}")
_MARKDOWN = re.compile(r"```\w*|`|\*\*|(?<!\w)__(?=\w)|(?<=\w)__(?!\w)|\$\$?")
_LINE_MARK = re.compile(r"^\s{0,3}(?:#{1,6}|>|[-*+])\s+", re.MULTILINE)
_NUMBERED = re.compile(r"^\s{0,3}(\d{1,2})[.)]\s+", re.MULTILINE)     # "1. " and "1) " items keep their number as "(1) "


def _word(m: re.Match) -> str:
    """`\\text{…}`, `\\mathrm{…}` … -> their content, kept apart from a command right before it (\\sim\\mathrm{Unif})."""
    before = m.string[m.start() - 1:m.start()]
    return (" " if before.isalpha() else "") + m[1]


def _command(m: re.Match) -> str:
    """A LaTeX command as its symbol or name; a space keeps it apart from a following letter (\\sum_x\\min)."""
    out = _LATEX_SYMBOLS.get(m[1], m[1])
    nxt = m.string[m.end():m.end() + 1]
    return out + " " if nxt.isalpha() or nxt == "\\" else out


# A starred name (p^\star, p^*, p^{*}, p⋆): the distribution after processing, the same p to the rules.
_STARRED = re.compile(r"(?<=[A-Za-z])\^\{?\s*(?:\\star|\\ast|\*|⋆)\s*\}?|(?<=[A-Za-z])⋆")


_BRACE_NOTE = re.compile(r"\\(?:under|over)brace\s*(?=\{)")


def _group_end(text: str, start: int) -> int:
    """The index after the brace group opening at text[start] == "{" (its end of text if unbalanced)."""
    depth = 0
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i + 1
    return len(text)


def _drop_brace_notes(text: str) -> str:
    """`\\underbrace{X}_{=Y}` (or `\\overbrace{X}^{…}`) -> `X`: the note under the brace is a comment on X,
    not a term of the equation it stands in. A note that is an identity (`_{=\\min(p,q)}`) says X = Y: that
    equation is written on a line of its own after the line of the brace."""
    while (m := _BRACE_NOTE.search(text)) is not None:
        body_end = _group_end(text, m.end())
        body = text[m.end() + 1:body_end - 1]
        rest = body_end
        note = re.match(r"\s*[_^]\s*", text[rest:])
        said = ""
        if note:
            start = rest + note.end()
            rest = _group_end(text, start) if text[start:start + 1] == "{" else start + 1
            content = text[start + 1:rest - 1] if text[start:start + 1] == "{" else text[start:rest]
            if re.match(r"\s*(?:\\[,;!]\s*)*=", content):
                said = f"{body} {content.strip()}"
        line_end = text.find("\n", rest)
        line_end = len(text) if line_end < 0 else line_end
        tail = text[rest:line_end] + (f"\n{said}\n" if said else "")
        text = text[:m.start()] + body + tail + text[line_end:]
    return text


_TRAILING_NOTE = re.compile(r"(?<=\S)[ \t]+((?://|#)[ \t].*)$")
_RELATION_START = re.compile(r"[ \t]*[=≤≥<>≈]")


def _notes_after_chains(text: str) -> str:
    """A code comment ending a row that the next row continues (`P = 1 - Σ min(p, q)  // Σ q == 1`, then
    `= Σ max(…)`) moves after the chain's last row: the chain goes on past it, not from the comment's `== 1`."""
    lines = text.split("\n")
    following = [""] * len(lines)                   # the next non-blank line after each line
    nxt = ""
    for i in range(len(lines) - 1, -1, -1):
        following[i] = nxt
        if lines[i].strip():
            nxt = lines[i]
    out, notes = [], []
    for i, line in enumerate(lines):
        goes_on = _RELATION_START.match(following[i]) is not None
        note = _TRAILING_NOTE.search(line) if goes_on else None
        if note:
            notes.append(note[1])
            line = line[:note.start()]
        out.append(line)
        if notes and not goes_on and line.strip():
            out.extend(notes)
            notes = []
    return "\n".join(out + notes)


def latex_to_plain(text: str) -> str:
    """LaTeX math markup -> the plain notation students also type (`min(p, q)`, `(a)/(b)`, `Σ_v`)."""
    text = re.sub(r"\\([_#%&])", r"\1", text)                         # escaped characters: \_rejection\_kernel
    text = _drop_brace_notes(text)
    if _ENVIRONMENT.search(text) or "\\\\" in text:                  # alignment marks only in display math
        text = _ALIGN_NOTE.sub("", _ENVIRONMENT.sub("\n", text)).replace("&", "")
    text = re.sub(r"\\arg\s*\\(max|min)\b", r"arg\1", text)           # \arg\max p: argmax p, one word
    text = _STARRED.sub("", text.replace(r"\{", "(").replace(r"\}", ")"))
    text = _SIZING.sub(lambda m: (m[1] or "").lstrip("\\").replace(".", ""), text)
    text = _PLUS_PART.sub(r"\1_+", text)
    text = _ACCENT.sub(lambda m: " " + (m[1] if m[1] is not None else m[2]), text)
    text = _FONT_GROUP.sub(r"{\1}", text)
    text = _WORD_LETTER.sub(r" \1", text)
    for _ in range(4):
        new = _WORD.sub(_word, _FRAC.sub(r"(\1)/(\2)", text))
        if new == text:
            break
        text = new
    text = _FRAC_SHORT.sub(r"(\1)/(\2)", text)
    text = _COMMAND.sub(_command, text)
    text = re.sub(r"\\[,;!: ]", " ", text.replace("\\\\", "\n"))        # a row break first: `\\ ` is no `\ `
    # a row opening with a relation goes on the row above (anchored after a character: no quadratic scan of blank runs)
    text = re.sub(r"(?<=\S)[ \t]*\n\s*(?=[=≤≥<>≈])", " ", _notes_after_chains(text))
    for _ in range(3):
        text = _SUBSCRIPT_GROUP.sub(r"\1\2", text)
    return text.replace("{", "(").replace("}", ")")


# Traditional -> Simplified fallback: pairs (traditional, simplified) of the characters the lessons'
# answers use; zhconv, when installed, converts every character and the regional words (機率 -> 几率).
_HANT_FALLBACK = (
    "丟丢並并佈布佔占來来倆俩倉仓個个們们側侧備备傳传僅仅價价優优儲储內内兩两別别刪删則则剛刚動动務务勢势勻匀區区卻却參参問问"
    "啓启啟启單单嗎吗嚴严圍围圓圆圖图執执報报場场塊块壓压壞坏夠够夾夹學学實实審审寫写寬宽將将對对導导層层屬属峯峰師师帶带幾几"
    "庫库廢废張张強强後后徑径從从復复恆恒態态應应懲惩戶户掛挂採采換换損损擁拥擇择擔担據据擬拟敗败數数斷断於于時时書书會会東东"
    "條条棄弃極极構构樂乐標标樣样機机檔档檢检權权歸归殘残決决沒没況况洩泄減减測测湊凑準准溫温滾滚滿满漸渐濾滤瀏浏為为無无爭争"
    "爾尔牆墙犧牺狀状獨独獻献現现環环產产畢毕畫画異异當当疊叠發发確确碼码種种稱称積积穩稳窮穷競竞筆笔節节範范簡简籤签糾纠約约"
    "納纳純纯級级細细終终組组結结絕绝絡络給给統统經经維维綱纲網网綴缀緊紧線线緣缘編编緩缓練练縮缩總总繼继續续罰罚羅罗義义習习"
    "聯联聲声臨临臺台與与舉举舊旧蓋盖處处虛虚號号虧亏術术衝冲裏里補补裝装裡里見见規规視视覺觉覽览觀观觸触計计討讨記记訪访設设"
    "許许訴诉評评詞词詢询試试話话該该認认語语誤误說说説说誰谁課课調调談谈請请論论諸诸謂谓講讲證证議议護护讀读變变讓让貝贝負负"
    "貢贡貪贪責责貴贵費费貼贴資资質质賴赖賺赚趨趋踐践較较載载輕轻輪轮輯辑輸输轉转辦办這这連连進进運运過过達达違违遞递遠远適适"
    "遲迟選选還还邊边邏逻鄰邻釋释針针銷销錄录錯错鍵键鍾钟鏈链長长開开閒闲間间閱阅閲阅閾阈關关陣阵陳陈際际隨随險险隱隐雖虽離离"
    "難难響响頁页頂顶項项順顺須须預预頭头題题顛颠類类顯显風风餘余餵喂餾馏饋馈馬马驗验驟骤髒脏體体麼么點点齊齐"
)
_HANT = {ord(_HANT_FALLBACK[i]): _HANT_FALLBACK[i + 1] for i in range(0, len(_HANT_FALLBACK), 2)}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

try:
    import zhconv as _zhconv
except ImportError:                      # pragma: no cover - the fallback table is tested directly
    _zhconv = None


# Written Cantonese (and a few dialect, Taiwanese and Japanese words: 啥子, 咋个, 機率, 取樣, 確率) as Mandarin, so that one rule reads both (「p 要係做晒 penalty 嘅 target」 = 「p 要是做完 penalty 的
# target」, 「唔使 rollback」 = 「不使 rollback」, 「冇偏」 = 「没有偏」). 係 is 是 except in 關係 / 聯係 / 係數 (relation,
# coefficient), and it is rewritten before the script conversion, which spells it 系.
_CANTONESE_IS = re.compile(r"(?<![關关聯联干體体])係(?![數数統统咪])")
# Written Cantonese typed in Simplified script spells 係 as 系 (「概率系 min(p,q)」, 「唔系」): in a text with Cantonese
# particles, 系 outside its Mandarin words (关系, 系统, 系数, 体系, 系列 …) is 是 as well.
_CANTONESE_PARTICLE = re.compile(r"[嘅唔咗冇喺佢啲嗰噉嚟哋啱咁]")
_CANTONESE_IS_SIMPLIFIED = re.compile(r"(?<![关联干体派院维直母语星谱])系(?![数统列于咪])")
_REGIONAL = [(re.compile(a), b) for a, b in (
    ("係咪|系咪", "是不是"), ("有冇", "有没有"), ("加埋", "加起来"), ("跟住", "跟着"), ("[淨净]返", "只剩"), ("佢哋", "它们"),
    ("啱啱", "刚好"), ("乜嘢", "什么"), ("嘅", "的"), ("唔", "不"), ("冇", "没有"), ("咗", "了"), ("喺", "在"),
    ("嚟", "来"), ("呢(?=个|啲|些|度|次|种|样|条|行|位|句|步)", "这"), ("啲", "些"), ("嗰", "那"), ("佢", "它"), ("哋", "们"), ("咩", "什么"), ("嘢", "东西"),
    ("晒", "完"), ("啱", "对"), ("睇", "看"), ("[諗谂]", "想"), ("[畀俾]", "给"), ("[拎攞]", "拿"), ("[揾搵]", "找"),
    ("噉", "这样"), ("咁", "这么"), ("啥子|啥", "什么"), ("咋个|咋", "怎么"),
    # Taiwanese terms: 機率 (概率), 取樣 (采样), 演算法 (算法)
    ("[机几]率", "概率"), ("取样", "采样"), ("演算法", "算法"),
    # Japanese terms of students writing Chinese as a second language: 確率 (概率), 棄却 (拒绝), 受理 / 採択 (接受),
    # 同時分布 (联合分布), 条件付き確率 (条件概率), katakana loanwords, 1行目 (第一行)
    ("确率", "概率"), ("弃却|棄却", "拒绝"), ("受理|[采採]択", "接受"), ("同时分布", "联合分布"), ("条件付き", "条件"),
    ("サンプリング|サンプル", "采样"), ("リジェクト", "拒绝"), ("アクセプト", "接受"), ("ドラフト", "草稿"),
    ("ターゲット", " target "), ("トークン", " token "), (r"\(?([1-9一二三四])\)?\s*行目", r"第 \1 行"))]


@functools.lru_cache(maxsize=8192)
def _traditional(ch: str) -> bool:
    """A character that zhconv writes differently in Simplified Chinese."""
    return _zhconv.convert(ch, "zh-cn") != ch


def simplified(text: str, use_library: bool = True) -> str:
    """Traditional Chinese as Simplified (zhconv when available, else the fallback table), written Cantonese
    and dialect, Taiwanese and Japanese words as Mandarin (`_REGIONAL`); other text unchanged."""
    if not text or not _CJK.search(text):
        return text
    text = _CANTONESE_IS.sub("是", text)
    if "系" in text and _CANTONESE_PARTICLE.search(text):
        text = _CANTONESE_IS_SIMPLIFIED.sub("是", text)
    if use_library and _zhconv is not None:
        # only text with a Traditional character: zhconv's phrase table also rewrites Simplified text
        # (「凭什么正好」 -> 「凭什幺正好」, after 幺正, "unitary")
        if any(_traditional(ch) for ch in set(_CJK.findall(text))):
            text = _zhconv.convert(text, "zh-cn")
    else:
        text = text.translate(_HANT)
    for pattern, mandarin in _REGIONAL:
        text = pattern.sub(mandarin, text)
    return text


# Chinese written against Latin letters or digits ("q和p", "_rejection_kernel干的活"): a space between them, as
# mixed text is usually typeset, so that word boundaries and `q(?![-\w])` mean the same in both spellings.
_CJK_LATIN = re.compile(r"(?<=[\u3400-\u9fff])(?=[A-Za-z0-9_`])|(?<=[A-Za-z0-9_`])(?=[\u3400-\u9fff])")
# A positive part written with a plain plus, "(p−q)+" or "(p-q)+(y)": the same as (p−q)_+.
_CARET_PLUS = re.compile(r"([\])])\s*\^\s*\{?\s*\+\s*\}?")
_PLAIN_PLUS_PART = re.compile(r"([)\]])\+(?=\s*(?:$|[;；,，。=)\]→]|\.(?:\s|$)|\((?:[a-z]|[a-z]_?\w)\)))", re.MULTILINE)


_FENCE = re.compile(r"^\s*```[^\n]*\n(.*?)^\s*```", re.DOTALL | re.MULTILINE)
_CONTINUED = re.compile(r"[,(\[{\\+\-*/=:]\s*$")
_GOES_ON = re.compile(r"^\s*[=+\-*/→⇒<>≤≥]")
# A line of code outside a fence: an assignment (`acc = np.minimum(p, q)`, `rej += …`) or a comment line.
_CODE_LINE = re.compile(r"^\s*(?:#|//)\s|^\s*[A-Za-z_][\w.\[\]]*\s*[+\-*/]?=(?!=)")


def _end_statements(lines: list[str], every: bool) -> list[str]:
    """Lines of code (all of them when `every`, else those that look like code, and the line before such a
    line) end with 「；」 unless they go on: a trailing comma, bracket or operator, or a next line that opens
    with one (`= Σ max(…)` continuing a chain)."""
    ends = set()
    for i, ln in enumerate(lines):
        if ln.strip() and (every or _CODE_LINE.match(ln)):
            ends.add(i)
            if not every and i and lines[i - 1].strip():
                ends.add(i - 1)
    out = []
    for i, ln in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if i in ends and not _CONTINUED.search(ln) and not _GOES_ON.match(nxt) and not re.search(r"[。！？!?；;]\s*$", ln):
            ln = ln.rstrip() + "；"
        out.append(ln)
    return out


def _code_lines_end(text: str) -> str:
    """Each line of code is a statement of its own (「acc = …」, then 「rej = …」): inside a fenced block every
    line, outside one the lines that look like code. Two such lines never read as one sentence."""
    def close(m: re.Match) -> str:
        return m[0].replace(m[1], "\n".join(_end_statements(m[1].split("\n"), True)), 1)
    text = _FENCE.sub(close, text)
    return "\n".join(_end_statements(text.split("\n"), False))


def swap_letters(text: str, a: str, b: str) -> str:
    """`text` with the single letters a and b exchanged where they stand as symbols (p(x), p_j, \\frac{p}{q}),
    not inside words or names (top-p, top_p, np, prob)."""
    pattern = re.compile(r"(?<![A-Za-z_\-])([" + a + b + r"])(?![A-Za-z])")
    return pattern.sub(lambda m: b if m[1] == a else a, text)


# Phone-typed math: 乘 between two terms is a product (q乘min(…)); min(p q) with a space for the comma.
_TIMES_WORD = re.compile(r"(?<=[A-Za-z0-9)\]])\s*乘以?(?![积起出法])\s*(?=[A-Za-z(\[])")
_SPACED_ARGS = re.compile(r"(?<![A-Za-z])(min|max)\(\s*((?:[\w./+\-]|\(\w*\))+)\s+((?:[\w./+\-]|\(\w*\))+)\s*\)", re.IGNORECASE)


# A markdown table: its rule rows go, and each row reads as one sentence whose cells are clauses
# (「| 草稿 = y 且接受 | q(y)·min(1, p/q) = min(p, q) |」 -> 「草稿 = y 且接受，q(y)·min(1, p/q) = min(p, q)」).
_TABLE_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$", re.MULTILINE)
_TABLE_RULE = re.compile(r"^[\s|:\-]*-[\s|:\-]*$")


def _table_row(m: re.Match) -> str:
    if _TABLE_RULE.fullmatch(m[1]):
        return ""
    cells, depth, start = [], 0, 0
    body = m[1]
    for i, ch in enumerate(body):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "|" and depth <= 0:
            cells.append(body[start:i])
            start = i + 1
    cells.append(body[start:])
    return "，".join(c.strip() for c in cells if c.strip())


# A statement the student took back: struck out (~~…~~), or the line just before a line that opens with a correction
# (「订正：第 2 行应该是 …」, 「更正：…」, 「上面写错了，…」). What is taken back is not part of the answer; the
# correction is, right or wrong.
_STRUCK = re.compile(r"~~(?!\s)[^~]*?~~", re.DOTALL)
_CORRECTION_LINE = re.compile(r"^\s*(?:[-*+]\s+|\(?\d{1,2}[.)、]\s*)?(?:(?:订正|更正|改正|纠正)\s*[:：]|(?:上面|上一行|前面|刚才|上一句)\S{0,8}写错了)")


def _retracted(text: str) -> str:
    out: list[str] = []
    for line in _STRUCK.sub("\x00", text).split("\n"):
        struck = "\x00" in line                 # a correction of what it struck out on its own line
        line = line.replace("\x00", "")
        if _CORRECTION_LINE.match(line) and not struck:
            for k in range(len(out) - 1, -1, -1):
                if out[k].strip():
                    if not _CORRECTION_LINE.match(out[k]):
                        out[k] = ""
                    break
        out.append(line)
    return "\n".join(out)


def readable(text: str | None) -> str:
    """clean, markdown and LaTeX markup removed (LaTeX as plain math), case kept: what evidence quotes."""
    text = _code_lines_end(latex_to_plain(_TABLE_ROW.sub(_table_row, _unwrapped(_retracted(clean(text))))))
    text = _MARKDOWN.sub("", _NUMBERED.sub(r"(\1) ", _LINE_MARK.sub("", text)))
    text = _SPACED_ARGS.sub(r"\1(\2, \3)", _TIMES_WORD.sub("·", text))
    text = _PLAIN_PLUS_PART.sub(r"\1_+", _CJK_LATIN.sub(" ", text))
    text = _CARET_PLUS.sub(r"\1_+", text)              # (p − q)^+ and [z]^+: the positive part, one spelling
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


# Prose hard-wrapped at a fixed width: a long line that ends a sentence inside it (。；！？ before its end, or in English
# a full stop or comma between two words: 「…computed for them, are all conditioned on a」) but not at
# its end, followed by a line that goes on in Chinese, in lower case or with a `name`, is one text wrapped mid-sentence
# (「…后调 `rejection_sample(...)`」 / 「启动它们；…」): the line break is a space. A line per statement (no mark inside
# it, or one at its end), a table row, a line of code, an indented line and the lines of a code fence keep their line
# breaks.
_MARK_INSIDE = re.compile(r"[。；;！？](?=.*\S)|(?<=[a-z]{2})[.,!?](?=\s+[A-Za-z]{2,})")
_GOES_ON_LINE = re.compile(r"^[\u3400-\u9fffa-z`_]")
_WRAP_MIN = 30


def _unwrapped(text: str) -> str:
    out: list[str] = []
    joinable, fenced = False, False          # may the line before take the next one; inside ``` … ```
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append(line)
            joinable = False
            continue
        plain_line = (not fenced and not line.startswith((" ", "\t", "|")) and not line.lstrip().startswith("|")
                      and not _CODE_LINE.match(line))
        if joinable and plain_line and _GOES_ON_LINE.match(line):
            out[-1] = out[-1].rstrip() + " " + line
        else:
            out.append(line)
        last = out[-1].rstrip()
        joinable = (plain_line and len(last) >= _WRAP_MIN and bool(_MARK_INSIDE.search(last))
                    and not re.search(r"[。；;！？!?，,、：:][)）\]」』\"'”’]*$", last))
    return "\n".join(out)


# Chat jargon of the field, spelled out: 「drf 越贴近 tgt」 = 「draft 越贴近 target」.
_JARGON = [(re.compile(a), b) for a, b in ((r"\btgt\b", "target"), (r"\bdrf\b", "draft"))]
# Rhetorical questions that assert: 「还不是因为 q 和 p 差不多？」 = 「就是因为…。」, 「哪一次上线不是稳稳三倍？」 = 「每一次上线都是…。」,
# 「q 离 p 很远，输出怎么可能还是 p？」 = 「…不可能还是 p。」, 「论文里不是说快两倍嘛」 = 「论文里说快两倍嘛」. The question mark that closes one goes with it: the sentence
# is read as the statement it makes.
def _asserted(spelled: str):
    """The replacement of a rhetorical question: the statement, the rest of its sentence, a full stop for its
    question mark."""
    def put(m: re.Match) -> str:
        return m.expand(spelled) + m["rest"] + ("。" if m["mark"] else "")
    return put


_RHETORICAL = [(re.compile(a + r"(?P<rest>[^。！？?!\n]*)(?P<mark>[?？])?"), _asserted(b)) for a, b in (
    (r"(?:还|难道)不是(?P<a>因为|由于|靠)", r"就是\g<a>"), (r"哪\s*(?P<a>回|次|一次|天|家|个|种)(?P<b>\S{0,6}?)\s*不是", r"每\g<a>\g<b>都是"),
    (r"何尝不是", "也是"), (r"怎么可能", "不可能"), (r"不是(?P<a>说|讲|写着?)(?=[^。！？?!\n]*(嘛|吗|么))", r"\g<a>"))]


# A why left to the reader: 「拒绝概率为什么刚好抵消分母，这里略过」 asks the step it skips; the why-clause gets its
# question mark and asserts nothing.
_SKIPPED_WHY = re.compile(r"(?P<why>(为什么|为何|为啥|怎么|如何)[^。！？?!\n，,；;]{0,40})(?P<skip>[，,]\s*(这里|此处|这一步|这步|在此|就)?\s*"
                          r"(先)?(略过|略去|从略|省略|不展开|不赘述|不证了|不写了|不细说|不多说|留给读者))")


def spelled_out(low: str) -> str:
    """Lower-case Simplified text with the field's chat jargon spelled out, the rhetorical questions that
    assert read as assertions and a why left to the reader read as a question: what sentence rules and vetoes
    match."""
    for pattern, spelled in _JARGON + _RHETORICAL:
        low = pattern.sub(spelled, low)
    return _SKIPPED_WHY.sub(lambda m: m["why"] + "？" + m["skip"][1:], low)


def plain(text: str | None) -> str:
    """What the rules match: `readable`, lower case, single spaces (line breaks kept), `spelled_out`."""
    text = spelled_out(simplified(readable(text)).lower())
    # Every whitespace run becomes one character (a newline if it had one): keeps sentence breaks and
    # stops stacked `\s*` in rubric patterns from backtracking over long runs.
    return _WHITESPACE.sub(lambda m: "\n" if "\n" in m[0] else " ", text).strip()


def compact(text: str | None) -> str:
    """`plain` without any whitespace or markup punctuation: what the copy checks compare."""
    return re.sub(r"[\s*_`$#>|]", "", plain(text))


_PROSE_TOKEN = re.compile(r"[\u3400-\u9fff]|(?<![\w./])[a-z]{3,}(?![\w./(])")
_MATH_WORDS = {"min", "max", "sum", "log", "exp", "frac", "cdot"}


def prose_tokens(text: str | None) -> list[str]:
    """The answer's prose as tokens (Chinese characters, English words of 3+ letters), without formulas,
    code names and paths: what the copy checks compare (formulas and names are shared by every right answer)."""
    return [t for t in _PROSE_TOKEN.findall(plain(text)) if t not in _MATH_WORDS]


# Names misread by OCR or misspelled by one confusable character: a handwritten sheet transcribed into the notebook
# reads `_rejection_kerneI`, `_rejecti0n_kernel`, `rejection_sampIer_utils.py`. A name (snake_case, a dotted path or
# a file, CamelCase; 8 characters or more) that is not one the lesson uses, but is one of them with l/1/I/i and o/0
# folded together, is read as that name.
_NAME = re.compile(r"(?<![\w.])[A-Za-z0-9_][\w.]*[A-Za-z0-9_]")
_FOLD = str.maketrans({"0": "o", "1": "l", "i": "l"})


def _name_like(token: str) -> bool:
    return len(token) >= 8 and ("_" in token or "." in token or bool(re.search(r"[a-z][A-Z]", token)))


def _folded(token: str) -> str:
    return token.lower().translate(_FOLD)


@functools.lru_cache(maxsize=16)
def known_names(*texts: str | None) -> dict[str, str]:
    """Folded spelling -> name, for the names the given texts (the lesson, a reference answer) use; a folded
    spelling two different names share is left out (neither is guessed)."""
    out: dict[str, str] = {}
    for text in texts:
        for token in _NAME.findall(clean(text or "")):
            if _name_like(token):
                key = _folded(token)
                out[key] = token if out.get(key, token) == token else ""
    return {k: v for k, v in out.items() if v}


def repair_names(text: str | None, names: dict[str, str]) -> str | None:
    """`text` with each name that is a known name but for OCR-confusable characters written as the known name."""
    if not text or not names:
        return text
    known = set(names.values())

    def fix(m: re.Match) -> str:
        token = m[0]
        if not _name_like(token) or token in known:
            return token
        return names.get(_folded(token), token)
    return _NAME.sub(fix, text)


# Terms typed with a pinyin input method that picked a homophone: 惨差 for 残差, 巨绝 for 拒绝, 概律 for 概率, 草搞
# for 草稿. A Chinese character that the lesson never uses and that is part of no word of the dictionary where it
# stands, but that reads (toneless pinyin) like the one character that would make the run of two or three
# characters around it one of the lesson's terms (a word of the dictionary the lesson uses twice or more), is read
# as that character. pypinyin gives the readings, jieba's dictionary the words; without them nothing is repaired.
_HANZI = re.compile(r"[\u4e00-\u9fff]")


@functools.lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    """The words of 2 to 4 characters of jieba's dictionary (empty without jieba)."""
    try:
        from importlib.resources import files
        text = (files("jieba") / "dict.txt").read_text(encoding="utf-8")
    except (ImportError, OSError):                   # pragma: no cover - jieba is in requirements.txt
        return frozenset()
    return frozenset(w for w in (ln.split(" ", 1)[0] for ln in text.splitlines()) if 2 <= len(w) <= 4)


def _reading(ch: str) -> str | None:
    """The usual toneless pinyin of one character (None without pypinyin)."""
    try:
        from pypinyin import Style, pinyin
    except ImportError:                              # pragma: no cover - pypinyin is in requirements.txt
        return None
    return pinyin(ch, style=Style.NORMAL, errors="ignore")[0][0] if _HANZI.match(ch) else None


def _one_char(text: str) -> str:
    """`text` as Simplified Chinese character by character (the same length)."""
    return "".join(s if len(s := simplified(ch)) == 1 else ch for ch in text)


@functools.lru_cache(maxsize=16)
def known_terms(*texts: str | None) -> tuple[frozenset[str], frozenset[str], dict]:
    """(characters, runs of 2–3 characters, index) of the given texts (the lesson, a reference answer): the index maps
    a term with one character blanked and that character's reading (`残?` + `cha`) to the characters that fill it."""
    text = _one_char("\n".join(t for t in texts if t))
    chars = frozenset(_HANZI.findall(text))
    counts: dict[str, int] = {}
    for n in (2, 3):
        for i in range(len(text) - n + 1):
            run = text[i:i + n]
            if all(_HANZI.match(ch) for ch in run):
                counts[run] = counts.get(run, 0) + 1
    index: dict[tuple[str, str], set[str]] = {}
    try:
        from pypinyin import Style, lazy_pinyin
    except ImportError:                              # pragma: no cover
        return chars, frozenset(counts), {}
    words = _dictionary()
    for run, n in counts.items():
        if n < 2 or run not in words:
            continue
        for j, sound in enumerate(lazy_pinyin(run, style=Style.NORMAL)):   # read in context: 差 of 残差 is cha
            index.setdefault((run[:j] + "?" + run[j + 1:], sound), set()).add(run[j])
    return chars, frozenset(counts), {k: frozenset(v) for k, v in index.items()}


def repair_terms(text: str | None, terms: tuple) -> str | None:
    """`text` with each homophone typo of one of the lesson's terms (see `known_terms`) written as the term."""
    if not text or not terms or not terms[2] or not _HANZI.search(text):
        return text
    chars, runs, index = terms
    s = _one_char(text)
    out = list(text)
    for i, ch in enumerate(s):
        if not _HANZI.match(ch) or ch in chars:
            continue
        sound = _reading(ch)
        found: set[str] = set()
        for n in (2, 3):
            for a in range(max(0, i - n + 1), min(i, len(s) - n) + 1):
                run = s[a:a + n]
                if run not in runs and all(_HANZI.match(c) for c in run):
                    found |= index.get((run[:i - a] + "?" + run[i - a + 1:], sound), frozenset())
        found.discard(ch)
        if len(found) != 1:
            continue
        words = _dictionary()
        if any(s[a:a + n] in words for n in (2, 3, 4) for a in range(max(0, i - n + 1), min(i, len(s) - n) + 1)):
            continue                                 # part of a real word where it stands (巨大, 惨重): not a typo
        out[i] = next(iter(found))
    return "".join(out)
