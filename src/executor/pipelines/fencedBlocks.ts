/**
 * The fenced blocks (```json or bare ```) of an agent's answer, where the plan and the verdict are read from.
 */
const FENCED = /```(?:json)?\s*\n([\s\S]*?)\n```/g;

/** Each block in order: `[1]` its text, `index` where its fence starts. */
export function fencedBlocks(text: string): RegExpExecArray[] {
  // Every block ends at a "\n```", so nothing after the last one is in a block: the text is cut there first. Else
  // each opening fence with no closing one after it had the lazy match scan to the end, once per fence: an answer
  // of 1 MB of "```\nX" held the worker for about 30 s (quadratic). With the cut, every such scan ends at a fence.
  const end = text.lastIndexOf('\n```');
  return end < 0 ? [] : [...text.slice(0, end + 4).matchAll(FENCED)];
}
