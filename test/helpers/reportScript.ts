/**
 * A scripted agent whose execute writes files and an agent report proposing decisions (and constraints), and whose
 * reviews approve: the knowledge suites' agent (a run's report is what its candidates come from).
 */
export interface ReportingScript {
  /** Milliseconds the execute waits first (a stop or a takeover lands meanwhile). */
  wait?: number;
  writes: ReadonlyArray<{ path: string; content: string }>;
  summary: string;
  decisions: readonly string[];
  constraints?: readonly string[];
}

export function reportingScript(s: ReportingScript): string {
  const items = (kind: string, texts: readonly string[]) => texts.map((t) => `              - ${kind}: "${t}"`).join('\n');
  return `steps:
  - match: { role: execute }
    actions:
${s.wait ? `      - wait: ${s.wait}\n` : ''}${s.writes.map((w) => `      - write: { path: ${JSON.stringify(w.path)}, content: ${JSON.stringify(w.content)} }\n`).join('')}      - write:
          path: .maestro/report.md
          content: |
            ---
            verdict: done
            summary: "${s.summary}"
            decisions:
${items('accepted', s.decisions)}
${s.constraints?.length ? `            constraints:\n${items('locked', s.constraints)}\n` : ''}            ---
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;
}
