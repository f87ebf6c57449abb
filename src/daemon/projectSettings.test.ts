import { describe, expect, it } from 'vitest';
import { isMaestroError } from '../core/errors.js';
import { parseProjectSettings } from './projectSettings.js';

const refusal = (raw: unknown): string => {
  try {
    parseProjectSettings(raw);
  } catch (err) {
    if (isMaestroError(err, 'BAD_INPUT')) return err.message;
    throw err;
  }
  throw new Error('accepted');
};

describe("a project's stored settings", () => {
  it("say where a setting the repository keeps goes (its .maestro/config.json), not only that it is unknown here", () => {
    expect(refusal({ limits: { maxDiffFiles: 3 } })).toBe(
      'Invalid project settings: config: Unrecognized key: "limits". Nothing was saved. limits is the repository\'s own: set it in its .maestro/config.json and commit it (maestro init writes one).',
    );
    expect(refusal({ checks: [], models: {} })).toMatch(/Nothing was saved\. checks and models are the repository's own: set them in its \.maestro\/config\.json/);
    // A key known nowhere: unknown, and the ones there are (a person could not find them: `project config set --help` named none).
    expect(refusal({ limitz: 1 })).toBe(
      'Invalid project settings: config: Unrecognized key: "limitz". Nothing was saved. A project\'s settings are provider, baseBranch, remote, autoApproveAfterMs, autoReplyAfterMs, autoReply, keepBranches, passEnv; its checks, limits and models are in its repository\'s .maestro/config.json.',
    );
    // A wrong value of a known key: its problem only.
    expect(refusal({ keepBranches: 'yes' })).toBe('Invalid project settings: config.keepBranches: Invalid input: expected boolean, received string. Nothing was saved.');
    expect(parseProjectSettings({ keepBranches: true })).toEqual({ keepBranches: true });
  });
});
