import { describe, expect, it } from 'vitest';
import type { AgentToolStatus } from '../../agents/detect.js';
import { describeAgentChoices, usableAgents } from './agentOffer.js';

const tool = (kind: AgentToolStatus['kind'], installed: boolean, loggedIn: boolean | null, detail: string): AgentToolStatus => ({
  kind, name: { claude: 'Claude Code', codex: 'Codex CLI', gemini: 'Gemini CLI', cursor: 'Cursor Agent', opencode: 'OpenCode' }[kind], executable: kind, path: installed ? `/bin/${kind}` : null, installed, loggedIn, detail,
});

describe('the agent tools project add offers', () => {
  const agents = [
    tool('claude', true, false, 'no ANTHROPIC_API_KEY'),
    tool('codex', true, true, 'OPENAI_API_KEY is set'),
    tool('gemini', false, null, 'not installed'),
    tool('cursor', false, null, 'not installed'),
    tool('opencode', true, true, 'login found in ~/.local/share/opencode/auth.json'),
  ];

  it('offers the installed tools, logged-in ones first', () => {
    expect(usableAgents(agents).map((a) => a.kind)).toEqual(['codex', 'opencode', 'claude']);
  });

  it('prints one line per usable tool, the missing ones together, then the hint', () => {
    expect(describeAgentChoices(agents, 'Pick one with --provider <kind>.')).toBe([
      'Agent tools the daemon can run:',
      '  codex     Codex CLI    ready (OPENAI_API_KEY is set)',
      '  opencode  OpenCode     ready (login found in ~/.local/share/opencode/auth.json)',
      '  claude    Claude Code  installed, not logged in: no ANTHROPIC_API_KEY',
      '  not installed: gemini, cursor',
      'Pick one with --provider <kind>.',
    ].join('\n'));
  });

  it('says so when nothing is installed', () => {
    expect(describeAgentChoices([tool('gemini', false, null, '')], 'hint')).toBe('No agent tool is installed where the daemon runs.\n  not installed: gemini\nhint');
  });
});
