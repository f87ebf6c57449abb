import { describe, expect, it } from 'vitest';
import { knowledgeElsewhereLines } from './taskKnowledge.js';

describe("task show's line for knowledge staged on another daemon and not imported here", () => {
  it('names the runs and the daemon, why they did not come, where their candidates are, and how to review them there; one line per daemon', () => {
    const task = { id: 't_0123456789ab' };
    expect(knowledgeElsewhereLines(task, [])).toEqual([]);
    expect(knowledgeElsewhereLines(task, [
      { daemon: 'build-1', runId: 'r_1', kind: 'plan', host: 'laptop', home: '/home/ana/.maestro', error: null },
      { daemon: 'build-1', runId: 'r_2', kind: 'execute', host: 'laptop', home: '/home/ana/.maestro', error: null },
      { daemon: 'ci\nstatus: done', runId: 'r_3', kind: 'conflict', host: null, home: null, error: 'the ledger of run r_3 stored in the database: field candidates must be an array.' },
    ])).toEqual([
      "The knowledge candidates proposed by the plan run r_1, execute run r_2 on daemon build-1 are not available here: they finished before runs' candidates were stored in the database, so they are staged only in build-1's clone of the project (.workflow/sessions/task-t-0123456789ab/runs/<run>/, under /home/ana/.maestro on laptop). Review them there: maestro knowledge review t_0123456789ab, on build-1's host.",
      "The knowledge candidates proposed by the conflict run r_3 on daemon ci\\u{a}status: done are not available here: their ledger stored in the database could not be imported (the ledger of run r_3 stored in the database: field candidates must be an array.), so they are staged only in ci\\u{a}status: done's clone of the project (.workflow/sessions/task-t-0123456789ab/runs/<run>/, under its MAESTRO_HOME on its host). Review them there: maestro knowledge review t_0123456789ab, on ci\\u{a}status: done's host.",
    ]);
  });
});
