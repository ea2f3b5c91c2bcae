// Words that carry no evidence in a keyword query: function words (dropped whatever the text search config,
// since `simple` keeps them) and the scaffolding of a question ("what do my notes say about …", "如何…").
// Pure lists and predicates; the query planner decides when to apply them.

const FUNCTION_WORDS = new Set(
  (
    'a an the and or of to in on at by for from with as is are was were be been being am it its this that these those ' +
    'there here then than so if into onto over under about per via'
  ).split(' '),
);

/** Said only when asking: they count as evidence in a title query ("How to style backlinks"), never in a question. */
const QUESTION_WORDS = new Set(
  (
    'what whats which who whom whose why how when where do does did doing done can could should would will shall may might must ' +
    'i im ive me my mine myself we our us you your one ones anything something everything any some please possible'
  ).split(' '),
);

/**
 * The frame of a question about the vault ("what do my notes say about …", "show me the note on …"): no
 * evidence while the question is still framing itself, but content once it has started ("the note that
 * contains it", "a way to …"), so they are dropped only before the question's first content word.
 */
const FRAME_WORDS = new Set(
  'note notes vault say says said tell mention mentions mentioned written write wrote find show give way ways thing things kind type'.split(
    ' ',
  ),
);

const CJK_STOP = new Set(
  (
    '的 了 是 在 和 与 或 及 跟 同 吗 呢 吧 啊 呀 么 嘛 着 过 地 得 把 被 让 给 对 从 向 就 都 也 还 又 而 但 ' +
    '什么 怎么 怎样 怎么样 如何 为什么 为何 哪些 哪个 哪里 哪儿 哪 是否 是不是 有没有 能不能 可不可以 ' +
    '我 我的 我们 你 你的 他 她 它 这 那 这个 那个 这些 那些 这是 一个 一些 一下 ' +
    '关于 有关 相关 笔记 里 里面 中 上 下 说 讲 提到 内容 方面 多少 几 有 没有 能 可以 应该 要 会 需要 叫 叫做'
  ).split(' '),
);

/** A function word (any language we list): no evidence in any query that has other words. */
export function isFunctionWord(word: string): boolean {
  const w = word.toLowerCase();
  return FUNCTION_WORDS.has(w) || CJK_STOP.has(w);
}

/** Question scaffolding: no evidence once the query reads as a question. */
export function isQuestionWord(word: string): boolean {
  return QUESTION_WORDS.has(word.toLowerCase().replace(/['’]/g, ''));
}

/** A word of a question's frame: no evidence before the question's first content word (see FRAME_WORDS). */
export function isFrameWord(word: string): boolean {
  return FRAME_WORDS.has(word.toLowerCase().replace(/['’]/g, ''));
}

const QUESTION_START =
  /^\s*(what|which|who|whom|whose|why|how|when|where|do|does|did|can|could|should|would|is|are|was|were|will|has|have|any)\b/i;
const CJK_QUESTION = /[？?]|什么|怎么|怎样|如何|为什么|为何|哪些|哪个|哪里|是否|有没有|吗|呢/;

/** Whether a query reads as a natural-language question (so its scaffolding words are not evidence). */
export function isQuestion(query: string): boolean {
  return QUESTION_START.test(query) || CJK_QUESTION.test(query) || /\?\s*$/.test(query);
}
