import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { budget } from '../../../test/helpers/budget.js';
import { tempRoot } from '../../../test/helpers/knowledge.js';
import type { CodeNode } from './graph.js';
import { openKnowledge } from '../knowledge.js';
import { parseTreeSitterFile } from './treeSitterCode.js';

function write(dir: string, rel: string, text: string): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), text);
}

const PY_CLIENT = `"""HTTP client with retries."""
import os
import json as j
from .backoff import delay_for, _jitter
from . import limits
from ..shared.util import helper

RETRY_LIMIT = 5
_cache = {}

def fetch_with_retry(url, attempts=RETRY_LIMIT):
    return delay_for(attempts)

def _private_helper():
    pass

@dataclass
class RetryPolicy:
    attempts: int = 3

class _Internal:
    pass
`;

const GO_STORE = `package store

import (
\t"fmt"
\tm "example.com/shop/internal/money"
)

// Store keeps orders.
type Store struct{ items []string }

type reader interface{ Read() }

type Reader interface{ Read() }

const MaxItems = 10
const minItems = 1

var ErrFull = fmt.Errorf("full")

func New() *Store { return &Store{} }

func helper() {}

func (s *Store) Add(item string) error { _ = m.Cents(1); return nil }

func (s *Store) grow() {}
`;

describe('the code graph for other languages (tree-sitter, WebAssembly)', { timeout: budget(60_000) }, () => {
  it('reads Python: public top-level defs, classes and assignments; every form of import', async () => {
    const parsed = await parseTreeSitterFile('python', PY_CLIENT);
    expect(parsed.symbols.map((s) => [s.name, s.kind, s.line])).toEqual([
      ['RETRY_LIMIT', 'variable', 8],
      ['fetch_with_retry', 'function', 11],
      ['RetryPolicy', 'class', 18], // the class line, not its decorator's
    ]);
    expect(parsed.symbols[1]!.signature).toBe('def fetch_with_retry(url, attempts=RETRY_LIMIT):');
    expect(parsed.imports).toEqual(['os', 'json', '.backoff', '.limits', '..shared.util']);
  });

  it('keeps what it can read of a file with syntax errors, and never throws on any content', async () => {
    const broken = await parseTreeSitterFile('python', 'def ok():\n    pass\n\ndef broken(:\n    return\n\nclass Fine:\n    pass\n');
    expect(broken.symbols.map((s) => s.name)).toEqual(expect.arrayContaining(['ok', 'Fine']));
    for (const lang of ['python', 'go', 'rust', 'java', 'ruby'] as const) {
      await expect(parseTreeSitterFile(lang, '\u0000\u0001 {{{ ((( 🙂 "unterminated')).resolves.toMatchObject({ symbols: expect.any(Array), imports: expect.any(Array) });
    }
  });

  it('reads Go: capitalised funcs, methods, types, consts and vars; import paths', async () => {
    const parsed = await parseTreeSitterFile('go', GO_STORE);
    expect(parsed.symbols.map((s) => [s.name, s.kind])).toEqual([
      ['Store', 'struct'],
      ['Reader', 'interface'],
      ['MaxItems', 'const'],
      ['ErrFull', 'variable'],
      ['New', 'function'],
      ['Store.Add', 'method'],
    ]);
    expect(parsed.imports).toEqual(['fmt', 'example.com/shop/internal/money']);
  });

  it('reads Rust (exactly `pub` items, use and mod) and Java (public top-level types, imports)', async () => {
    const rs = await parseTreeSitterFile('rust', `use std::io::{self, Read};\nuse crate::money::Cents;\nmod money;\npub mod api;\n\npub struct Cart { items: Vec<u32> }\nstruct Hidden;\npub(crate) fn internal() {}\npub fn total(c: &Cart) -> u32 { 0 }\npub trait Priced {}\npub enum Currency { Eur }\npub const MAX: u32 = 3;\n`);
    expect(rs.symbols.map((s) => [s.name, s.kind])).toEqual([
      ['api', 'module'],
      ['Cart', 'struct'],
      ['total', 'function'],
      ['Priced', 'trait'],
      ['Currency', 'enum'],
      ['MAX', 'const'],
    ]);
    expect(rs.imports).toEqual(['std::io::{self,Read}', 'crate::money::Cents', 'mod:money', 'mod:api']);
    const java = await parseTreeSitterFile('java', `package com.shop;\n\nimport java.util.List;\nimport com.shop.money.Cents;\nimport static com.shop.money.Cents.ZERO;\n\n@Deprecated\npublic class Cart {\n  public int total() { return 0; }\n}\nclass Helper {}\npublic interface Priced {}\n`);
    expect(java.symbols.map((s) => [s.name, s.kind, s.line])).toEqual([
      ['Cart', 'class', 7],
      ['Priced', 'interface', 12],
    ]);
    expect(java.imports).toEqual(['java.util.List', 'com.shop.money.Cents', 'static com.shop.money.Cents.ZERO']);
  });

  it('reads Ruby: top-level classes, modules, defs and constants; require and require_relative', async () => {
    const rb = await parseTreeSitterFile('ruby', `require 'json'\nrequire_relative './money'\nMAX_ITEMS = 3\nmodule Shop\n  class Inner; end\nend\nclass Order < Base\nend\ndef total(order)\n  0\nend\n`);
    expect(rb.symbols.map((s) => [s.name, s.kind, s.line])).toEqual([
      ['MAX_ITEMS', 'const', 3],
      ['Shop', 'module', 4],
      ['Order', 'class', 7],
      ['total', 'function', 9],
    ]);
    expect(rb.imports).toEqual(['json', 'relative:./money']);
  });

  it('indexes a mixed-language project: search finds symbols, files resolve their imports, and --kg returns loadable code nodes', async () => {
    const { dir } = tempRoot();
    write(dir, 'pyapp/__init__.py', '');
    write(dir, 'pyapp/client.py', PY_CLIENT);
    write(dir, 'pyapp/backoff.py', 'def delay_for(n):\n    return n * 2\n\ndef _jitter():\n    pass\n');
    write(dir, 'pyapp/limits.py', 'MAX_RETRIES = 3\n');
    write(dir, 'go.mod', 'module example.com/shop\n\ngo 1.22\n');
    write(dir, 'internal/store/store.go', GO_STORE);
    write(dir, 'internal/money/money.go', 'package money\n\nfunc Cents(n int) int { return n }\n');
    write(dir, 'internal/money/format.go', 'package money\n\nfunc Format(n int) string { return "" }\n');
    write(dir, 'internal/money/money_test.go', 'package money\n\nfunc TestCents() {}\n');
    write(dir, 'rs/src/lib.rs', 'mod money;\npub fn total() -> u32 { money::cents() }\n');
    write(dir, 'rs/src/money.rs', 'pub fn cents() -> u32 { 1 }\n');
    write(dir, 'java/src/main/java/com/shop/Cart.java', 'package com.shop;\nimport com.shop.money.Cents;\npublic class Cart {}\n');
    write(dir, 'java/src/main/java/com/shop/money/Cents.java', 'package com.shop.money;\npublic final class Cents {}\n');
    write(dir, 'venv/lib/site.py', 'def fetch_with_retry_vendored():\n    pass\n');
    write(dir, 'rb/order.rb', "require_relative './money'\nclass Order; end\n");
    write(dir, 'rb/money.rb', 'module Money; end\n');
    const k = openKnowledge({ env: process.env, workflowRoot: dir });
    try {
      const report = await k.syncCode();
      expect(report.files).toBe(14); // venv/ is skipped
      const py = await k.searchCode('fetch_with_retry');
      expect(py.results[0]).toMatchObject({ id: 'code:pyapp/client.py#fetch_with_retry', kind: 'function', filePath: 'pyapp/client.py', line: 11 });
      expect(py.results.map((r) => r.id)).not.toContain('code:venv/lib/site.py#fetch_with_retry_vendored');
      expect((await k.searchCode('_private_helper')).results.map((r) => r.id)).not.toContain('code:pyapp/client.py#_private_helper');

      const client = (await k.load('file:pyapp/client.py')) as CodeNode;
      expect(client.imports).toEqual([
        { spec: 'os', resolved: null },
        { spec: 'json', resolved: null },
        { spec: '.backoff', resolved: 'pyapp/backoff.py' },
        { spec: '.limits', resolved: 'pyapp/limits.py' },
        { spec: '..shared.util', resolved: null },
      ]);
      expect(((await k.load('file:pyapp/backoff.py')) as CodeNode).importedBy).toEqual(['pyapp/client.py']);

      const store = (await k.load('file:internal/store/store.go')) as CodeNode;
      expect(store.symbols!.map((s) => s.name)).toEqual(['Store', 'Reader', 'MaxItems', 'ErrFull', 'New', 'Store.Add']);
      // A Go import names a package: an edge to each of its (non-test) files.
      expect(store.imports).toEqual([
        { spec: 'fmt', resolved: null },
        { spec: 'example.com/shop/internal/money', resolved: 'internal/money/format.go' },
        { spec: 'example.com/shop/internal/money', resolved: 'internal/money/money.go' },
      ]);
      expect((await k.searchCode('Store.Add')).results[0]).toMatchObject({ id: 'code:internal/store/store.go#Store.Add', kind: 'method' });

      expect(((await k.load('file:rb/order.rb')) as CodeNode).imports).toEqual([{ spec: 'relative:./money', resolved: 'rb/money.rb' }]);
      expect(((await k.load('file:rs/src/lib.rs')) as CodeNode).imports).toEqual([{ spec: 'mod:money', resolved: 'rs/src/money.rs' }]);
      expect(((await k.load('file:java/src/main/java/com/shop/Cart.java')) as CodeNode).imports).toEqual([{ spec: 'com.shop.money.Cents', resolved: 'java/src/main/java/com/shop/money/Cents.java' }]);

      const kg = await k.searchKg('Cents', { type: 'code', limit: 10 });
      expect(kg.results.length).toBeGreaterThan(0);
      expect(kg.results.every((r) => r.sourceType === 'codegraph')).toBe(true);
      for (const r of kg.results) expect((await k.load(r.id)).id).toBe(r.id);
    } finally {
      k.close();
    }
  });
});
