/** A repository and a task branch with every kind of change a reviewer meets (review API and CLI tests). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeRepo } from './repo.js';

/** On `maestro/<taskId>-v1`: one file added, one deleted, one renamed (and edited), one modified, one binary, one large. */
export function makeTaskBranch(repo: string, taskId: string): string {
  const branch = `maestro/${taskId}-v1`;
  git(repo, 'checkout', '-q', '-b', branch);
  writeFileSync(join(repo, 'added.ts'), 'export const added = 1;\nexport const two = 2;\n');
  git(repo, 'rm', '-q', 'gone.txt');
  git(repo, 'mv', 'old-name.md', 'new-name.md');
  writeFileSync(join(repo, 'new-name.md'), `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\nline 21 added\n`);
  writeFileSync(join(repo, 'src.ts'), 'const a = 1;\nconst b = 3;\nconst c = 3;\n');
  writeFileSync(join(repo, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3, 0, 255]));
  writeFileSync(join(repo, 'big.txt'), Array.from({ length: 2500 }, (_, i) => `row ${i}`).join('\n') + '\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'task change');
  git(repo, 'checkout', '-q', 'main');
  return branch;
}

export function reviewRepo(): string {
  return makeRepo({
    'README.md': '# test\n',
    'gone.txt': 'bye\n',
    'old-name.md': `${Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n')}\n`,
    'src.ts': 'const a = 1;\nconst b = 2;\nconst c = 3;\n',
  });
}

