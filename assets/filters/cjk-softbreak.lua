--[[
cjk-softbreak.lua: drop the soft line breaks that fall inside Chinese (or other East Asian) text.

A source line that breaks in the middle of a Chinese paragraph gives Pandoc a SoftBreak, which
HTML shows as a space: 「正确性」 becomes 「正确 性」. Pandoc's `east_asian_line_breaks` extension
removes such breaks, but Quarto ignores `from: markdown+east_asian_line_breaks` (quarto-cli #8520),
so this filter does the same job in both Pandoc and Quarto.

Rule: a SoftBreak is removed when the character before it and the character after it are both
wide (CJK ideographs, kana, hangul, full-width forms and CJK punctuation), or when either side is
full-width punctuation (「，」「。」「（」…), after which no space is wanted. Every other SoftBreak
(English text, a break next to inline code or math) is kept, so Latin words never run together.
A plain Space is removed only in one case: after full-width punctuation and before a wide
character (「**规则。** 设……」), where Chinese typesetting never has one.
]]

local function is_wide(cp)
  return (cp >= 0x1100 and cp <= 0x115F)      -- Hangul Jamo
      or (cp >= 0x2E80 and cp <= 0x303E)      -- CJK radicals, Kangxi, CJK symbols and punctuation
      or (cp >= 0x3041 and cp <= 0x33FF)      -- kana, bopomofo, CJK compatibility
      or (cp >= 0x3400 and cp <= 0x4DBF)      -- CJK extension A
      or (cp >= 0x4E00 and cp <= 0x9FFF)      -- CJK unified ideographs
      or (cp >= 0xA960 and cp <= 0xA97F)      -- Hangul Jamo extended A
      or (cp >= 0xAC00 and cp <= 0xD7A3)      -- Hangul syllables
      or (cp >= 0xF900 and cp <= 0xFAFF)      -- CJK compatibility ideographs
      or (cp >= 0xFE30 and cp <= 0xFE4F)      -- CJK compatibility forms
      or (cp >= 0xFF01 and cp <= 0xFF60)      -- full-width forms
      or (cp >= 0xFFE0 and cp <= 0xFFE6)
      or (cp >= 0x20000 and cp <= 0x3FFFD)    -- CJK extensions B and later
end

local function is_wide_punct(cp)
  return (cp >= 0x3000 and cp <= 0x303F)      -- 、。「」『』【】〈〉…
      or (cp >= 0xFF01 and cp <= 0xFF0F)      -- ！＂＃…／
      or (cp >= 0xFF1A and cp <= 0xFF20)      -- ：；＜＝＞？＠
      or (cp >= 0xFF3B and cp <= 0xFF40)
      or (cp >= 0xFF5B and cp <= 0xFF65)      -- ｛｜｝～…
      or (cp >= 0xFE30 and cp <= 0xFE4F)
end

local function first_cp(s)
  for _, cp in utf8.codes(s) do
    return cp
  end
end

local function last_cp(s)
  local last
  for _, cp in utf8.codes(s) do
    last = cp
  end
  return last
end

-- The text an inline starts or ends with, looking inside emphasis, links and spans.
local CONTAINERS = { Emph = true, Strong = true, Strikeout = true, Underline = true,
                     SmallCaps = true, Span = true, Link = true, Quoted = true }

local function edge_cp(inline, at_end)
  if inline == nil then
    return nil
  end
  if inline.t == "Str" then
    local ok, cp = pcall(at_end and last_cp or first_cp, inline.text)
    return ok and cp or nil
  end
  if CONTAINERS[inline.t] and inline.content and #inline.content > 0 then
    return edge_cp(inline.content[at_end and #inline.content or 1], at_end)
  end
  return nil
end

local function drop(before, after)
  if before == nil or after == nil then
    return false
  end
  if is_wide_punct(before) or is_wide_punct(after) then
    return true
  end
  return is_wide(before) and is_wide(after)
end

function Inlines(inlines)
  local out = pandoc.Inlines({})
  for i, inline in ipairs(inlines) do
    local keep = true
    if inline.t == "SoftBreak" then
      keep = not drop(edge_cp(inlines[i - 1], true), edge_cp(inlines[i + 1], false))
    elseif inline.t == "Space" then
      local before, after = edge_cp(inlines[i - 1], true), edge_cp(inlines[i + 1], false)
      keep = not (before and after and is_wide_punct(before) and is_wide(after))
    end
    if keep then
      out:insert(inline)
    end
  end
  return out
end
