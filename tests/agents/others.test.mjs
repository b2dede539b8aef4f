// others.test.mjs: papo in the other agent CLIs pinned in package.json,
// offline (run.sh's network namespace), as far as each goes without a
// model: papo added by `papo setup codex` / `papo setup gemini` (by hand
// when this papo has no setup), then the CLI's own `mcp list`.
//
//  - Gemini CLI 0.61.0: `gemini mcp list` connects to each server and
//    shows papo ✓ Connected, over stdio and over HTTP (in a folder it
//    trusts: ~/.gemini/trustedFolders.json; untrusted, every server is
//    disabled);
//  - Codex 0.171.0: `codex mcp list` lists papo (command, args, enabled)
//    without connecting; `codex mcp get papo` shows the entry.
//
// Run: bash tests/agents/run.sh path/to/papo --others (or ctest
// agents_others) after `npm ci --prefix tests/agents`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, papoPath } from '../clients/daemons.mjs';
import { hasSetup, offlineOrExit, room } from './claude.mjs';

offlineOrExit();
const HERE = path.dirname(fileURLToPath(import.meta.url));
const PAPO = papoPath();
const bin = (name) => path.join(HERE, 'node_modules', '.bin', name);
const env = (home) => ({ PATH: process.env.PATH, HOME: home, TERM: 'dumb', LANG: 'C.UTF-8', PAPO_LAN: 'off', PAPO_PORTMAP: 'off' });
const run = (cmd, args, home, cwd) => {
  const r = spawnSync(cmd, args, { env: env(home), cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
};

async function withRoom(name, body) {
  const R = await room(name, PAPO);
  try {
    await body(R);
  } finally {
    await R.close();
  }
}

// papo's entry for CLIENT in a new HOME: `papo setup CLIENT [--http]`,
// or by hand.  Returns the HOME.
function setup(R, client, http) {
  const home = path.join(R.D.root, `home-${client}`);
  fs.mkdirSync(path.join(home, 'work'), { recursive: true });
  if (hasSetup(PAPO)) {
    execFileSync(PAPO, ['setup', client, ...(http ? ['--http'] : [])], { env: { ...cleanEnv, HOME: home, PAPO_HOME: R.ana.home }, encoding: 'utf8' });
    return home;
  }
  if (client === 'gemini') {
    fs.mkdirSync(path.join(home, '.gemini'), { recursive: true });
    fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({
      mcpServers: { papo: http ? { httpUrl: R.ana.info.mcp } : { command: PAPO, args: ['mcp'], env: { PAPO_HOME: R.ana.home } } },
    }, null, 2));
  } else {
    fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
    fs.writeFileSync(path.join(home, '.codex', 'config.toml'), http
      ? `[mcp_servers.papo]\nurl = "${R.ana.info.mcp}"\n`
      : `[mcp_servers.papo]\ncommand = "${PAPO}"\nargs = ["mcp"]\nenv = { PAPO_HOME = "${R.ana.home}" }\n`);
  }
  return home;
}

describe('other agent CLIs', { concurrency: 4 }, () => {
  for (const http of [false, true]) {
    const how = http ? 'HTTP' : 'stdio';
    it(`gemini mcp list shows papo connected (${how})`, async () => {
      await withRoom(`gemini-${how}`, async (R) => {
        const home = setup(R, 'gemini', http);
        const cwd = path.join(home, 'work');
        // A folder Gemini CLI trusts (else it disables every server).
        fs.writeFileSync(path.join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [cwd]: 'TRUST_FOLDER' }));
        const r = run(bin('gemini'), ['mcp', 'list'], home, cwd);
        assert.match(r.out, /✓ papo: .* - Connected/, `gemini mcp list: ${r.out}`);
        assert.match(r.out, http ? new RegExp(`${R.ana.info.mcp.replace(/[.:/]/g, '\\$&')}`) : /papo mcp \(stdio\)/, `the entry is papo's over ${how}: ${r.out}`);
      });
    });
    it(`codex mcp list lists papo (${how}; Codex does not connect for it)`, async () => {
      await withRoom(`codex-${how}`, async (R) => {
        const home = setup(R, 'codex', http);
        const cwd = path.join(home, 'work');
        const r = run(bin('codex'), ['mcp', 'list'], home, cwd);
        assert.equal(r.code, 0, `codex mcp list exits 0: ${r.out}`);
        assert.match(r.out, /^papo\s.*\benabled\b/m, `codex mcp list: ${r.out}`);
        const g = run(bin('codex'), ['mcp', 'get', 'papo'], home, cwd);
        assert.match(g.out, http ? /transport: streamable_http/ : /transport: stdio/, `codex mcp get papo: ${g.out}`);
      });
    });
  }
});
