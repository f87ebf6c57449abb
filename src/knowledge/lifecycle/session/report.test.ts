/** report.md as a run starts it (the template, parsed once for every run that leaves it as it is) and as an agent fills it. */
import { describe, expect, it } from 'vitest';
import { parseReport, REPORT_TEMPLATE } from './report.js';

describe('parseReport', () => {
  it('reads the untouched template as an empty report, a copy of its own each time', () => {
    const first = parseReport(REPORT_TEMPLATE);
    expect(first).toMatchObject({ verdict: 'ready', summary: '', decisions: [], constraints: [], concerns: [] });
    first.decisions.push({ id: 'D1', text: 'changed by a caller', status: 'accepted' });
    first.summary = 'changed';
    expect(parseReport(REPORT_TEMPLATE)).toMatchObject({ summary: '', decisions: [] });
  });

  it('reads a filled-in template as written', () => {
    const filled = REPORT_TEMPLATE.replace('decisions: []', 'decisions:\n  - text: "Greetings use the full name"\n    status: accepted');
    expect(parseReport(filled).decisions).toEqual([expect.objectContaining({ text: 'Greetings use the full name', status: 'accepted' })]);
    expect(parseReport(REPORT_TEMPLATE).decisions).toEqual([]);
  });
});
