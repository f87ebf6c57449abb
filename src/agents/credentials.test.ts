import { describe, expect, it } from 'vitest';
import { agentEnv } from '../lib/agentEnv.js';
import { credentialsFor } from './credentials.js';

const daemonEnv = { PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant', AWS_SECRET_ACCESS_KEY: 'aws-secret', AWS_REGION: 'eu-west-1', GOOGLE_APPLICATION_CREDENTIALS: '/home/u/gcp.json', OPENAI_API_KEY: 'sk-openai' };

describe('credentialsFor', () => {
  it('gives a Claude run on the Anthropic API no AWS or Google credentials, and none of another provider', () => {
    expect(agentEnv(daemonEnv, { credentials: credentialsFor({ kind: 'claude' }, daemonEnv) })).toEqual({ PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant' });
  });

  it('passes the cloud a Claude run is switched to (Bedrock: AWS; Vertex: Google), and only that one', () => {
    const bedrock = { ...daemonEnv, CLAUDE_CODE_USE_BEDROCK: '1' };
    expect(agentEnv(bedrock, { credentials: credentialsFor({ kind: 'claude' }, bedrock) })).toEqual({ PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant', CLAUDE_CODE_USE_BEDROCK: '1', AWS_SECRET_ACCESS_KEY: 'aws-secret', AWS_REGION: 'eu-west-1' });
    const vertex = { ...daemonEnv, CLAUDE_CODE_USE_VERTEX: '1' };
    expect(agentEnv(vertex, { credentials: credentialsFor({ kind: 'claude' }, vertex) })).toEqual({ PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant', CLAUDE_CODE_USE_VERTEX: '1', GOOGLE_APPLICATION_CREDENTIALS: '/home/u/gcp.json' });
  });

  it('the switch may come from the project (its provider env) while the keys are the daemon\'s', () => {
    const provider = { kind: 'claude' as const, env: { CLAUDE_CODE_USE_BEDROCK: '1' } };
    expect(agentEnv(daemonEnv, { credentials: credentialsFor(provider, daemonEnv) })).toMatchObject({ AWS_SECRET_ACCESS_KEY: 'aws-secret', AWS_REGION: 'eu-west-1' });
  });

  it('gives a Gemini run its key and the base URL that points it at a gateway, and nothing of OpenAI\'s', () => {
    const env = { ...daemonEnv, GEMINI_API_KEY: 'g-key', GOOGLE_GEMINI_BASE_URL: 'https://gateway.example/gemini' };
    expect(agentEnv(env, { credentials: credentialsFor({ kind: 'gemini' }, env) })).toEqual({ PATH: '/bin', GOOGLE_APPLICATION_CREDENTIALS: '/home/u/gcp.json', GEMINI_API_KEY: 'g-key', GOOGLE_GEMINI_BASE_URL: 'https://gateway.example/gemini' });
  });

  it('leaves other providers their own list', () => {
    expect(credentialsFor({ kind: 'codex' }, daemonEnv)).toContain('OPENAI_API_KEY');
    expect(credentialsFor({ kind: 'scripted' }, daemonEnv)).toEqual([]);
  });
});
