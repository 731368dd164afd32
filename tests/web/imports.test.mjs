// Every module under web/js loads when it is the first one imported (a
// fresh process each): an import cycle between the router and the views
// broke this once ("Cannot access 'CP_COLOURS' before initialization").
// app.js is left out: it mounts the page at load and needs a document.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'web', 'js');

function modules(dir) {
    return readdirSync(dir).flatMap((n) => {
        const p = join(dir, n);
        return statSync(p).isDirectory() ? modules(p) : n.endsWith('.js') ? [p] : [];
    });
}

test('each web module loads first, on its own', () => {
    const failed = [];
    const all = modules(root).filter((p) => relative(root, p) !== 'app.js');
    assert.ok(all.length > 20, 'the modules were found');
    for (const u of all) {
        const out = execFileSync(process.execPath, ['--input-type=module', '-e',
            `try { await import(${JSON.stringify(pathToFileURL(u).href)}); console.log('[]'); }
             catch (e) { console.log(JSON.stringify([e.message])); }`], { encoding: 'utf8' });
        for (const m of JSON.parse(out.trim().split('\n').pop())) failed.push(`${relative(root, u)}: ${m}`);
    }
    assert.deepEqual(failed, []);
});
