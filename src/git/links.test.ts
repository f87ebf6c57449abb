import { describe, expect, it } from 'vitest';
import { leadsOutside } from './links.js';

describe('leadsOutside: a link\'s target judged by its text, from the link\'s folder', () => {
  it('keeps a target that stays under the root inside, and one that is absolute or climbs above it outside', () => {
    expect(leadsOutside('docs/latest', 'v2.md')).toBe(false);
    expect(leadsOutside('docs/up', '../README.md')).toBe(false);
    expect(leadsOutside('a/b/c', '../../x/./y//z')).toBe(false);
    expect(leadsOutside('top', '.')).toBe(false);
    expect(leadsOutside('top', '..')).toBe(true);
    expect(leadsOutside('key-link', '../../../../root/.ssh/id_rsa')).toBe(true);
    expect(leadsOutside('docs/abs', '/etc/passwd')).toBe(true);
    // Out and back in (by the repository folder's name) is out: the name is not the repository's to keep.
    expect(leadsOutside('x', '../repo/README.md')).toBe(true);
    expect(leadsOutside('a/l', 'b/../../../c')).toBe(true);
  });
});
