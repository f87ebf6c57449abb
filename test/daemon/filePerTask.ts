/**
 * The scripted agent of the merge queue suites (mergeQueueTurns, mergeBatch): task "Add <n>" writes <n>.txt, so no
 * two touch the same file and every merge is clean; every review approves.
 */
export function filePerTaskScript(names: readonly string[]): string {
  return `steps:
${names.map((n) => `  - match: { role: execute, title: "Add ${n}" }\n    actions:\n      - write: { path: ${n}.txt, content: "${n}\\n" }`).join('\n')}
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;
}
