"""TypeScript declarations -> exported API entries with their JSDoc: what a real ``.d.ts``
exports, members of classes and interfaces, ambient modules and namespaces; hostile files
(unbalanced braces, an endless comment, a minified line, more entries than allowed) read
bounded without an error; an installed npm package -> its README and one API page, with a
declaration file linked from outside the package left unread."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cogitave.ingest import dts
from cogitave.ingest.dts import api_markdown, npm_docs, read_declarations

DECLS = """\
import { Agent } from "./agent";

/**
 * Options of a request.
 * @see request
 */
export interface RequestOptions {
    /** Milliseconds before the request is abandoned. */
    timeout?: number;
    headers: Record<string, string>;
    private secret: string;
}

/**
 * Send one request and resolve with its body.
 * @param url - where to send it
 * @returns the body, decoded
 */
export declare function request(
    url: string,
    options?: RequestOptions,
): Promise<string>;

/** A client that keeps connections open. */
export declare class Client {
    constructor(agent?: Agent);
    /** Close every connection. */
    close(): void;
    readonly baseUrl: string;
}

export type Method = "GET" | "POST" | "{";
export declare const VERSION: string;
export enum Level { Low, High }
declare function internalHelper(): void;

export declare namespace util {
    /** Join two paths. */
    function join(a: string, b: string): string;
}
"""


def test_exported_entries_with_their_jsdoc() -> None:
    got = {e.name: e for e in read_declarations(DECLS, "index.d.ts")}
    assert {"RequestOptions", "request", "Client", "Method", "VERSION", "Level", "join"} <= set(got)
    assert "internalHelper" not in got  # not exported
    assert "RequestOptions.secret" not in got  # private
    assert got["request"].kind == "function"
    assert got["request"].signature.startswith("export declare function request( url: string,")
    assert "Promise<string>" in got["request"].signature
    assert "Send one request" in got["request"].doc and "**@param** url" in got["request"].doc
    assert (
        got["Client"].kind == "class"
        and got["Client"].doc == "A client that keeps connections open."
    )
    assert (
        got["Client.close"].kind == "member"
        and got["Client.close"].doc == "Close every connection."
    )
    assert got["RequestOptions.timeout"].doc.startswith("Milliseconds")
    assert got["Method"].kind == "type" and got["VERSION"].kind == "const"
    assert got["join"].doc == "Join two paths."
    page = api_markdown("fetchy", "1.0.0", list(got.values()))
    assert "## request\n" in page and "### Client.close\n" in page and "```ts\n" in page


def test_a_global_declaration_file_exports_everything_it_declares() -> None:
    got = read_declarations("/** Log it. */\ndeclare function log(x: unknown): void;\n")
    assert [(e.name, e.doc) for e in got] == [("log", "Log it.")]


def test_hostile_declarations_are_read_bounded() -> None:
    assert read_declarations("}" * 100_000 + "\nexport function ok(): void;\n")[0].name == "ok"
    assert read_declarations("/** never closed\n" + "x\n" * 50_000) == []
    assert read_declarations("{" * 100_000 + "\nexport function deep(): void;\n") == []
    minified = "export declare function big(" + "a: string, " * 100_000 + "): void;"
    (big,) = read_declarations(minified)
    assert len(big.signature) <= dts.MAX_SIGNATURE + 2
    many = "".join(f"export declare const c{i}: number;\n" for i in range(dts.MAX_ENTRIES + 50))
    assert len(read_declarations(many)) == dts.MAX_ENTRIES
    assert read_declarations("export function f(\n" + "x,\n" * 10_000)[0].name == "f"
    quoted = (
        'export declare const s: "}}}" | `{${string}`;\nexport declare function after(): void;\n'
    )
    assert [e.name for e in read_declarations(quoted)] == ["s", "after"]


def test_an_installed_npm_package_becomes_a_readme_and_an_api_page(tmp_path: Path) -> None:
    pkg = tmp_path / "node_modules" / "fetchy"
    (pkg / "dist").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": "fetchy", "types": "dist/index.d.ts"}))
    (pkg / "README.md").write_text("# fetchy\n\nFetch things.\n")
    (pkg / "dist" / "index.d.ts").write_text(DECLS)
    secret = tmp_path / "secret.d.ts"
    secret.write_text("export declare function leaked(): void;\n")
    os.symlink(secret, pkg / "dist" / "linked.d.ts")
    (pkg / "node_modules" / "dep").mkdir(parents=True)
    (pkg / "node_modules" / "dep" / "x.d.ts").write_text("export declare function nested(): void;")
    os.mkfifo(pkg / "dist" / "blocking.d.ts")  # a FIFO is refused, never waited on
    out = tmp_path / "docs"
    count = npm_docs(pkg, "fetchy", "1.0.0", out)
    assert count >= 7
    api = (out / "api.md").read_text()
    assert "## request" in api and "leaked" not in api and "nested" not in api
    assert (out / "README.md").read_text().startswith("# fetchy")
