// assay's bridge to a user's JavaScript: promptfoo-style assertions, transforms, test generators and var
// loaders. Reads one JSON request on stdin, calls the code once, and prints one result line
// `ASSAY_RESULT:{"ok":true,"value":...}` (or `{"ok":false,"error":"..."}`) as the last line of stdout.
// What the user's code logs goes to stderr, so it cannot be mistaken for the result.
//
// Request: {"code": "<inline source>" | null, "file": "/abs/path.js" | null, "function": "name" | null,
//           "kind": "assert" | "expression", "params": ["output", "context"], "args": [...]}
'use strict';

const { pathToFileURL } = require('url');

for (const name of ['log', 'info', 'debug', 'warn']) {
  console[name] = (...args) => console.error(...args);
}

async function loadModule(file) {
  try {
    return require(file);
  } catch (err) {
    const esm = err && (err.code === 'ERR_REQUIRE_ESM' || err.code === 'ERR_REQUIRE_ASYNC_MODULE');
    if (esm || (err instanceof SyntaxError && /import|export/.test(String(err.message)))) {
      return await import(pathToFileURL(file).href);
    }
    throw err;
  }
}

function pickFunction(mod, name, file) {
  if (name) {
    if (mod && typeof mod[name] === 'function') return mod[name];
    if (mod && mod.default && typeof mod.default[name] === 'function') return mod.default[name];
    throw new Error(`${file} exports no function named ${name}`);
  }
  if (typeof mod === 'function') return mod;
  if (mod && typeof mod.default === 'function') return mod.default;
  throw new Error(`${file} must export a function (module.exports = fn, or a default export)`);
}

// The index of the last `;` outside string literals, or -1.
function lastStatementSemicolon(code) {
  let quote = null;
  let last = -1;
  for (let i = 0; i < code.length; i++) {
    const ch = code[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'" || ch === '`') {
      quote = ch;
    } else if (ch === ';') {
      last = i;
    }
  }
  return last;
}

// A one-line assertion is an expression whose value is returned; one that starts with declarations
// returns its last statement. A multi-line one is a function body that returns for itself.
function functionBody(code, kind) {
  if (code.includes('\n')) return code;
  const line = code.trim().replace(/;+\s*$/, '');
  if (kind === 'assert' && /^(const|let|var)\s/.test(line)) {
    const at = lastStatementSemicolon(line);
    const tail = at >= 0 ? line.slice(at + 1).trim() : '';
    return tail ? `${line.slice(0, at + 1)} return ${tail}` : line;
  }
  return `return ${line}`;
}

function finish(payload) {
  let text;
  try {
    text = JSON.stringify(payload, (key, value) => (typeof value === 'bigint' ? String(value) : value));
  } catch (err) {
    text = JSON.stringify({ ok: false, error: `the result cannot be sent back as JSON: ${err.message}` });
  }
  process.stdout.write(`\nASSAY_RESULT:${text}\n`, () => process.exit(0));
}

async function callOnce(request) {
  let fn;
  let args = request.args || [];
  if (request.file) {
    const mod = await loadModule(request.file);
    if (request.exportedValue && !request.function) {
      const exported = mod && mod.default !== undefined && typeof mod !== 'function' ? mod.default : mod;
      if (typeof exported !== 'function') return exported;
    }
    fn = pickFunction(mod, request.function, request.file);
  } else {
    const params = request.params || [];
    fn = new Function(...params, 'process', functionBody(request.code || '', request.kind));
    args = [...args, process];
  }
  return await fn(...args);
}

function errorText(err) {
  const message = err && err.message ? err.message : String(err);
  return `${(err && err.name) || 'Error'}: ${message}`;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  if (Array.isArray(request.batch)) {
    // Several calls in one process (loading a suite: one transformVars per test).
    const results = [];
    for (const one of request.batch) {
      try {
        const value = await callOnce(one);
        results.push({ ok: true, value: value === undefined ? null : value, undefined: value === undefined });
      } catch (err) {
        results.push({ ok: false, error: errorText(err) });
      }
    }
    finish({ ok: true, value: results });
    return;
  }
  const value = await callOnce(request);
  finish({ ok: true, value: value === undefined ? null : value, undefined: value === undefined });
}

main().catch((err) => finish({ ok: false, error: errorText(err) }));
