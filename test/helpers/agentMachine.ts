/**
 * What an agent sees of a user's machine in the real-agent suites: a home holding a Maestro home with its
 * token, a project repository, and a task's worktree of it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tempDir } from './db.js';
import { git, makeRepo } from './repo.js';

export interface AgentMachine {
  home: string;
  maestroHome: string;
  repo: string;
  worktree: string;
}

/** `parent` is where the home goes (the system's temporary folder unless a tool needs it elsewhere). */
export function agentMachine(prefix: string, parent = tmpdir()): AgentMachine {
  const home = tempDir(`${prefix}-home-`, parent);
  const maestroHome = join(home, '.maestro');
  mkdirSync(maestroHome);
  writeFileSync(join(maestroHome, 'token'), 'daemon-token-secret\n');
  const repo = makeRepo({ 'README.md': '# project\n' });
  const worktree = join(tempDir(`${prefix}-wt-`), 'task');
  git(repo, 'worktree', 'add', '-q', '-b', 'task', worktree);
  return { home, maestroHome, repo, worktree };
}
