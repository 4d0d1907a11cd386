"""The engine's user-facing texts, Chinese (the course's language). Lesson wording lives in each
lesson's rubric (`feedback:`); these are the texts every lesson shares."""
from __future__ import annotations

SANDBOX = {
    "timeout": "代码运行超时（每次运行的墙钟上限 {timeout_s:g} 秒），进程组已被终止。死循环或过慢的写法？",
    "memory": "代码运行时内存不足（上限 {memory_mb} MiB）。",
    "killed": "运行代码的进程在时间上限之前被系统终止（很可能是机器内存不足）；请教师重新评分。",
    "crash": "运行代码的进程没有正常返回结果。",
}
INTERNAL = "评分器内部错误（不是你的代码的问题）：{detail}。请把这份报告交给教师。"
JUDGE_INTERNAL = "检查 {check} 判定时评分器内部出错（不是你的代码的问题），这份提交需要教师复核。"
RESULT_MISMATCH = "沙箱返回的结果数目与提交的调用数目不一致。"
SANDBOX_BLOCKED = "沙箱拒绝了这些操作：{events}"
UNKNOWN_LESSON_PATH = "metadata.course.lesson 必须是课程名（如 lesson07），不能是路径：{value!r}"
MISSING_METADATA = "笔记本缺少 metadata.course.lesson，无法确定是哪一课（可用 --lesson 指定）"
UNKNOWN_LESSON = "找不到课程 {name!r}（评分器可用的课程：{known}）"
BAD_LESSON = "课程或评分标准有误：{error}"
MISSING_ANSWER_CELL = "找不到问题 {answer} 的答案单元"
MISSING_EXERCISE = "找不到练习单元 {exercise!r}（没有带它的 course_id 的代码单元，也没有与它的模板相近的另一个单元）"
OPTIONAL_NOT_ATTEMPTED = "未作答（选做题，不计入总分）"
FOUND_BY_SIMILARITY = ("练习单元 {exercise} 的元数据丢失，评分器按内容找到了最像模板的代码单元；"
                       "请教师确认评的是正确的单元。")
