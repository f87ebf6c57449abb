import { describe, expect, it } from 'vitest';
import { destinationsFromTree, inertTransportArgs, packPrograms, refusedTransport, withPackPrograms } from './inertTransport.js';

const TREE = '/repo/.gitconfig';
const fromTree = (origin: string | null) => origin === TREE;
const entry = (origin: string, key: string, value: string) => ({ origin, key, value });

describe('inertTransportArgs', () => {
  it("empties the helper list when the tree adds one, and names the person's helpers again in their order", () => {
    const entries = [
      entry('/home/p/.gitconfig', 'credential.helper', 'store'),
      entry('/home/p/.gitconfig', 'credential.https://example.com.helper', 'cache'),
      entry(TREE, 'credential.helper', '!sh tools/cred.sh'),
    ];
    expect(inertTransportArgs(entries, fromTree, {})).toEqual(['-c', 'credential.helper=', '-c', 'credential.helper=store', '-c', 'credential.https://example.com.helper=cache']);
    expect(inertTransportArgs(entries.slice(0, 2), fromTree, {})).toEqual([]);
  });

  it("puts back the person's ssh command, or git's own (GIT_SSH when set); a value the person set last is left alone", () => {
    expect(inertTransportArgs([entry('/home/p/.gitconfig', 'core.sshcommand', 'ssh -i k'), entry(TREE, 'core.sshcommand', 'sh t.sh')], fromTree, {})).toEqual(['-c', 'core.sshcommand=ssh -i k']);
    expect(inertTransportArgs([entry(TREE, 'core.sshcommand', 'sh t.sh')], fromTree, { GIT_SSH: '/opt/my ssh' })).toEqual(['-c', "core.sshcommand='/opt/my ssh'"]);
    expect(inertTransportArgs([entry(TREE, 'core.askpass', 't.sh'), entry('/repo/.git/config', 'core.askpass', '/usr/bin/ksshaskpass')], fromTree, {})).toEqual([]);
  });

  it("answers protocol.allow from the tree with git's own policy for each protocol it names: ext never", () => {
    const args = inertTransportArgs([entry(TREE, 'protocol.allow', 'always')], fromTree, {});
    expect(args).toEqual(['-c', 'protocol.allow=user', '-c', 'protocol.http.allow=always', '-c', 'protocol.https.allow=always', '-c', 'protocol.git.allow=always', '-c', 'protocol.ssh.allow=always', '-c', 'protocol.ext.allow=never']);
  });
});

describe('packPrograms and withPackPrograms', () => {
  it("name git's own pack program on a fetch or push of the remote whose first one is the tree's", () => {
    const programs = packPrograms([entry(TREE, 'remote.origin.uploadpack', 'sh up.sh'), entry('/repo/.git/config', 'remote.origin.receivepack', '/usr/bin/rp')], fromTree);
    expect(withPackPrograms(['-c', 'maintenance.auto=false', 'fetch', '-q', 'origin', 'main'], programs)).toEqual(['-c', 'maintenance.auto=false', 'fetch', '--upload-pack=git-upload-pack', '-q', 'origin', 'main']);
    expect(withPackPrograms(['push', 'origin', 'main'], programs)).toEqual(['push', 'origin', 'main']);
    expect(withPackPrograms(['fetch', 'other'], programs)).toEqual(['fetch', 'other']);
    expect(withPackPrograms(['status'], programs)).toEqual(['status']);
  });
});

describe('destinationsFromTree and refusedTransport', () => {
  it("refuse a command that talks to a remote while the tree says where it goes; the person's own URLs and rewrites are theirs", () => {
    const entries = [
      entry('/repo/.git/config', 'remote.origin.url', '/srv/shared.git'),
      entry('/home/p/.gitconfig', 'url.git@github.com:.insteadof', 'https://github.com/'),
      entry(TREE, 'remote.origin.pushurl', '/tmp/elsewhere.git'),
    ];
    const destinations = destinationsFromTree(entries, fromTree);
    expect(destinations).toEqual([`remote.origin.pushurl set in ${TREE}`]);
    expect(refusedTransport(['-c', 'maintenance.auto=false', 'fetch', 'origin'], destinations)).toMatch(/^remote\.origin\.pushurl set in \/repo\/\.gitconfig, a file of the working tree .* would choose where git fetch goes/);
    expect(refusedTransport(['push', 'origin', 'main'], destinations)).not.toBeNull();
    expect(refusedTransport(['commit', '-m', 'x'], destinations)).toBeNull();
    expect(refusedTransport(['push', 'origin', 'main'], destinationsFromTree(entries.slice(0, 2), fromTree))).toBeNull();
    expect(inertTransportArgs(entries, fromTree, {})).toEqual([]);
  });
});
