"""Free-text answers for the grader's corpus: three good answer sets written independently of the
lesson's reference answers (different structure and wording), plus deliberately weak ones."""

GOOD = {
    "A": {
        "code-map": (
            "第一行（接受概率）对应 vLLM MRV2 的 Triton 核 `_rejection_kernel`，它在 `rejection_sampler_utils.py` 里，"
            "由主机函数 `rejection_sample` 启动。它按位置顺序检查草稿，用对数形式比较 log p(x) 与 log u + log q(x)，"
            "不显式计算 min(1, p/q)，并把每个请求接受的长度写进 `num_sampled`。\n\n"
            "第二行（残差）对应 `_resample_kernel`：它在第一个被拒的位置上构造 max(p − q, 0) 的对数作为 logits，"
            "再用 Gumbel-max 直接抽样，所以不需要先归一化。"
        ),
        "Q1": (
            "记 target 分布为 p、草稿分布为 q，草稿 token x 由 speculator 从 q 中抽出，验证器以概率 min(1, p(x)/q(x)) 接受它。"
            "对任意 token y，它经接受路径输出的概率是 q(y)·min(1, p(y)/q(y))，化简后就是 min(p(y), q(y))。"
            "把所有 x 的接受概率加起来再用 1 减去，得到总的拒绝概率 P(reject) = 1 − Σ min(p, q) = Σ max(0, p − q)。"
            "被拒绝后从残差 r(y) = max(0, p(y) − q(y)) / Σ max(0, p − q) 重新采样一个修正 token，"
            "于是拒绝路径输出 y 的概率是 P(reject)·r(y) = max(0, p(y) − q(y))。\n\n"
            "两条路径相加，min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)，所以输出分布正好是 p。"
            "这个等式对任何 q 都成立，q 只影响接受率，也就是成本。"
        ),
        "Q2": (
            "证明里的 p 必须就是要输出的分布，q 必须就是草稿实际被抽出时所用的分布。"
            "vLLM 的 `RejectionSampler._verify` 会先调用 `Sampler.apply_sampling_params`，把温度、top-k/top-p 和各种惩罚施加到 "
            "target logits 上，再把处理后的 logits 交给 `rejection_sample`；每个请求的温度和种子存在按槽位索引的状态里。"
            "如果 target 一侧漏掉了 repetition penalty 或 top-p，验证器输出的就是没处理过的分布，这是系统性偏差，而不是数值误差。"
            "grammar mask 也一样：只有在 p 上把不合语法的 token 置为 0，它们作为草稿时才一定被拒绝，残差里也不会再出现它们；"
            "否则输出可能违反语法。"
        ),
        "Q3": (
            "按链式法则，整段输出的联合分布是每一步在完整前缀条件下的条件概率的乘积。"
            "第 j 个草稿是 speculator 在包含前面所有草稿的前缀下抽出的，target 为这一行算的 p 也以同一个前缀为条件。"
            "一旦第 i 个位置被拒绝，输出的是从残差里抽出的修正 token，它一定不同于原来的草稿，真实前缀因此改变；"
            "后面那些行的 p 和 q 都是在旧前缀下算的，即使某个草稿碰巧与 target 会选的 token 相同，也没有任何概率是在新前缀下算出来的，"
            "接受它会让联合分布偏离 target。\n\n"
            "所以 vLLM 的 `_rejection_kernel` 在第一次拒绝后就停下，`num_sampled` 等于接受数加 1，`num_rejected` 等于 k 减去接受数；"
            "worker 把 `num_computed_tokens` 只推进到被接受的位置，被拒位置写入的 KV 槽位会在下一轮被新 token 覆盖。"
        ),
    },
    "B": {
        "code-map": (
            "在 vLLM 的 MRV2 里，接受概率这一行对应 `rejection_sample(...)` 调用的 `_rejection_kernel`：每个请求一个 program，"
            "判定条件是 u < p(x)/q(x)（写成对数），当 p(x) ≥ q(x) 时必然接受，所以等价于 min(1, p/q)；它写出接受长度。"
            "残差这一行对应 `_resample_kernel`，它用 log p + log1p(−q/p) 得到 max(p − q, 0) 的对数，再做 Gumbel-max 采样。"
            "在旧的 V1 采样器里，这两步分别是 `rejection_random_sample_kernel` 和 `sample_recovered_tokens_kernel`。"
        ),
        "Q1": (
            "Let p be the target distribution and q the draft distribution. 草稿 token x ~ q，验证器抽一个均匀数 u，"
            "若 u < p(x)/q(x) 就接受。对于词表中任一 token y：\n\n"
            "- 接受路径：P(propose y and accept) = q(y) · min(1, p(y)/q(y)) = min(p(y), q(y))；\n"
            "- 被拒绝的概率（rejection probability）是 1 − Σ_v min(p(v), q(v))，因为 Σ p = 1，它等于 Σ_v max(0, p(v) − q(v))；\n"
            "- 拒绝后从 residual r = (p − q)_+ / Σ (p − q)_+ 重采样，所以经过拒绝路径得到 y 的概率是 "
            "P(reject) · r(y) = max(0, p(y) − q(y))。\n\n"
            "两项之和 = min(p(y), q(y)) + max(0, p(y) − q(y)) = p(y)，因为 min(a, b) + max(0, a − b) = a 对任意实数成立。"
            "因此单步输出恰好服从 p，这一点与 q 选得好不好无关。"
        ),
        "Q2": (
            "拒绝采样的无偏性只保证「输出等于验证器所用的 p」。所以 p 必须是 target logits 经过这个请求的全部 sampling params"
            "（temperature、top-p、top-k、repetition penalty）以及 grammar bitmask 处理之后的分布；"
            "q 也必须是草稿真正被采样时用的那个分布，两边要一致。\n\n"
            "在 vLLM 里这一步由 `Sampler.apply_sampling_params` 在 `_verify` 中完成，惩罚项还会把同一轮前面的草稿算作已输出的 token。"
            "假如 target 侧没有应用 top-p，被 top-p 截掉的 token 在 p 里仍有质量，它们可能被接受或从残差中采出来，"
            "最终分布就不再是用户要求的分布；假如没有 grammar 掩码，非法 token 会漏进输出。"
        ),
        "Q3": (
            "Autoregressive 生成的联合概率满足 chain rule：P(y_1..y_n) = ∏ P(y_j | y_<j)。"
            "草稿 x_{i+1} 是在假设 x_i 已被接受的上下文中提出的，target 在这一行给出的分布也是 p(· | …, x_i)。"
            "当 x_i 被拒绝并被 resample 成 y_i 时，上下文变成了 (…, y_i)，x_{i+1} 的条件已经不成立；"
            "哪怕它恰好和 target 在新上下文下的 argmax 一样，也只是巧合，接受它就等于用错误条件下的概率生成下一个 token。\n\n"
            "正确做法是截断：本轮只输出接受的前缀加修正 token。在 vLLM 中，`_rejection_kernel` 在第一次拒绝后停止，"
            "`get_num_sampled_and_rejected` 算出 num_rejected，`Scheduler.update_from_output` 把乐观推进的 "
            "num_computed_tokens 减回去；被拒位置的 KV cache 槽位不做回滚，而是在下一轮被覆盖。"
        ),
    },
    "C": {
        "code-map": (
            "接受判定那一行对应 `_rejection_kernel`（由 `RejectionSampler._verify` 里的 `rejection_sample` 调用，写入 num_sampled）；"
            "残差那一行对应 `_resample_kernel`（构造残差 logits 再做 Gumbel-max 采样，省去了归一化）。"
        ),
        "Q1": (
            "证明分两条路径。草稿从 q 中提议 y 并被接受的概率是 q(y)·min(1, p(y)/q(y))，也就是 p(y) 与 q(y) 两者中较小的那个。"
            "拒绝的概率等于 1 减去所有 token 上 min(p, q) 的和，这恰好是残差的归一化常数 Σ max(0, p − q)。"
            "拒绝之后从归一化的残差中重新采样，拒绝路径给 y 带来的概率就是 max(0, p(y) − q(y))，分母被消掉了。"
            "把两条路径加起来，对每个 y 都得到 p(y)，所以这一步的输出分布等于 target。"
        ),
        "Q2": (
            "只有当公式里的 p 和 q 就是实际用到的分布时，Q1 的证明才成立。target 一侧必须先施加该请求的 repetition penalty、"
            "top-p 等采样参数和 grammar 掩码，得到处理后的 p，再去做接受判定；vLLM 在 `_verify` 里先调用 `apply_sampling_params` "
            "就是这个原因，而且每个请求的温度、种子和惩罚计数都按自己的槽位保存。"
            "若 target 没加掩码，语法不允许的 token 在 p 中仍有概率，可能被接受，也可能从残差 max(0, p − q) 中被抽到，输出就会违反语法；"
            "若漏掉 top-p 或惩罚，输出的就是另一个分布，偏离用户要求的分布。"
        ),
        "Q3": (
            "每个草稿都以它前面的草稿为条件：x_{i+1} 是在前缀含 x_i 的情况下抽的。第 i 个位置一旦被拒，输出的是修正 token，"
            "前缀已经变了，后面各行的 p 和 q 对应的都是一个不存在的前缀。按链式法则，整段序列的概率要求每一步都在真实前缀下采样，"
            "所以必须在第一次拒绝处截断，否则联合分布就不再等于 target。"
            "vLLM 的 `_rejection_kernel` 在此停止接受，num_sampled 记为接受数加 1，num_computed_tokens 只推进被接受的部分，"
            "多写的 KV 之后会被覆盖。"
        ),
    },
}

KEYWORDS = {
    "code-map": "_rejection_kernel、_resample_kernel",
    "Q1": "min(p, q)、max(0, p − q)、拒绝概率、残差分布、相加得 p",
    "Q2": "temperature、top-p、grammar mask、apply_sampling_params、偏差",
    "Q3": "链式法则、前缀、修正 token、num_sampled、KV 覆盖",
}

PARTIAL = {
    "code-map": "第一行是接受判定，第二行是残差，都在 vLLM 的 rejection sampler 文件里。",
    "Q1": "接受的时候概率是 min(p, q)，拒绝的时候要从残差里重新抽一个 token。这样最后的分布就是对的。",
    "Q2": "因为 grammar mask 会把一些 token 的概率变成 0，如果两边不一样，接受的 token 就可能不合法。所以两边必须用一样的设置。",
    "Q3": "因为后面的草稿是以被拒绝的那个 token 为前缀写出来的，前缀已经不对了，按链式法则不能再用。所以必须在第一次拒绝的地方停下来。",
}

VETO_SENTENCES = {
    "veto.peak_speedup": ("Q1", "在生产环境中，投机解码总能带来 3 倍的加速。"),
    "veto.universal_support": ("Q2", "vLLM 的这套拒绝采样实现支持所有模型和所有硬件。"),
    "veto.correctness_vs_performance": ("Q1", "因为投机解码速度更快，所以它的输出是无偏的。"),
}

NAMES_ONLY_Q3 = (
    "这个问题涉及 RejectionSampler、_rejection_kernel、_insert_resampled_kernel、Scheduler 和 num_computed_tokens 等对象。"
    "第一次拒绝以后，后面的草稿不能再被接受，因为它们的前缀条件已经不对了。按照链式法则，输出必须在第一处拒绝后截断。"
)
