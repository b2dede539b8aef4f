#!/usr/bin/env bash
# setup.sh: `papo setup CLIENT` as a person runs it, each case in a
# temporary HOME: for every client the entry written (jq), a second run
# changing no byte and saying so, --print writing nothing, --remove
# leaving a file that held other servers, hooks and keys with exactly
# those, a malformed file refused (exit 1, named, left byte-identical),
# --http entries carrying a running daemon's URL and token (and that URL
# answering MCP), PAPO_HOME carried, Claude Code's hooks present once and
# crossSessionInbound set only when asked.  Usage: setup.sh PATH_TO_PAPO.
# Prints "N passed, N failed".  Needs jq and curl.
PAPO=${1:?usage: setup.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_HOME PAPO_TOKEN PAPO_HTTP CLAUDE_CONFIG_DIR CODEX_HOME XDG_CONFIG_HOME
EXE=$(realpath "$PAPO")
n=0

fresh() { # fresh: a new, empty HOME
	n=$((n + 1))
	export HOME=$T/home$n
	mkdir -p "$HOME"
}
jqis() { # jqis FILE FILTER WANT DESCRIPTION
	is "$3" "$(jq -c "$2" "$1" 2>&1)" "$4"
}
same() { # same FILE COPY DESCRIPTION: byte for byte
	if cmp -s "$1" "$2"; then ok; else fail "$3: $1 changed: $(diff "$2" "$1" | head -10)"; fi
}
setup() { "$PAPO" setup "$@"; }

# Each JSON client: its file under HOME, the jq path of papo's entry,
# whether the entry has a type, its URL's key, and what else papo adds
# to that file (the hooks of Gemini CLI and Qwen Code, kept beside their
# MCP servers).
JSON_CLIENTS=(claude-code gemini qwen copilot cursor vscode)
declare -A FILE=([claude-code]=.claude.json [gemini]=.gemini/settings.json
	[qwen]=.qwen/settings.json [copilot]=.copilot/mcp-config.json
	[cursor]=.cursor/mcp.json [vscode]=.config/Code/User/mcp.json)
declare -A ENTRY=([claude-code]=.mcpServers.papo [gemini]=.mcpServers.papo
	[qwen]=.mcpServers.papo [copilot]=.mcpServers.papo
	[cursor]=.mcpServers.papo [vscode]=.servers.papo)
declare -A TYPED=([claude-code]=1 [gemini]=0 [qwen]=0 [copilot]=1 [cursor]=0
	[vscode]=1)
declare -A URLKEY=([claude-code]=url [gemini]=httpUrl [qwen]=httpUrl
	[copilot]=url [cursor]=url [vscode]=url)
declare -A MORE=([claude-code]= [gemini]=.hooks [qwen]=.hooks [copilot]=
	[cursor]= [vscode]=)
SETTINGS=.claude/settings.json

# Usage: no client, an unknown one, a flag for another client.
expect 2 "setup with no client" -- setup
has "$T/err" 'usage: papo setup CLIENT' "no client: usage"
has "$T/err" 'claude-code.*codex.*gemini.*qwen.*opencode.*cursor.*vscode' "no client: the clients listed"
expect 2 "unknown client" -- setup emacs
has "$T/err" "unknown client 'emacs'" "unknown client named"
has "$T/err" 'claude-code.*codex.*gemini.*qwen.*opencode.*cursor.*vscode' "unknown client: the known ones listed"
expect 2 "--accept-inbound for codex" -- setup codex --accept-inbound
expect 0 "setup --help" -- setup --help
has "$T/out" 'claude-code' "help lists the clients"

for c in "${JSON_CLIENTS[@]}"; do
	f=${FILE[$c]} e=${ENTRY[$c]} more=${MORE[$c]:+, ${MORE[$c]}}

	# A first run writes the stdio entry, with this binary's absolute path.
	fresh
	expect 0 "$c: setup" -- setup "$c"
	has "$T/out" "^$HOME/$f: .*papo.* added" "$c: the change is said with its file"
	jqis "$HOME/$f" "$e.command" "\"$EXE\"" "$c: command is this papo, absolute"
	jqis "$HOME/$f" "$e.args" '["mcp"]' "$c: args"
	jqis "$HOME/$f" "$e | has(\"env\")" false "$c: no env without PAPO_HOME"
	if [ "${TYPED[$c]}" = 1 ]; then jqis "$HOME/$f" "$e.type" '"stdio"' "$c: type"
	else jqis "$HOME/$f" "$e | has(\"type\")" false "$c: no type"; fi
	is 600 "$(stat -c %a "$HOME/$f")" "$c: a new file is private"
	d=$(dirname "$HOME/$f"); [ "$c" = claude-code ] && d=$HOME/.claude
	is 700 "$(stat -c %a "$d")" "$c: a new directory is private"

	# A second run changes no byte and says so.
	cp "$HOME/$f" "$T/copy"
	expect 0 "$c: setup again" -- setup "$c"
	same "$HOME/$f" "$T/copy" "$c: second run"
	has "$T/out" 'already set up' "$c: second run says already set up"
	has "$T/out" 'nothing changed' "$c: second run says nothing changed"
	[ "$c" = claude-code ] && { cp "$HOME/$SETTINGS" "$T/copy2"; setup "$c" >/dev/null; same "$HOME/$SETTINGS" "$T/copy2" "$c: settings.json on a third run"; }

	# --print writes nothing, and shows the path and the entry.
	fresh
	expect 0 "$c: --print" -- setup "$c" --print
	check "$c: --print wrote no file" test -z "$(find "$HOME" -mindepth 1 | head -1)"
	has "$T/out" "^$HOME/$f: .* would be added" "$c: --print names the file"
	has "$T/out" "\"command\": \"$EXE\"" "$c: --print shows the entry"

	# PAPO_HOME is carried, made absolute.
	fresh
	(cd "$T" && PAPO_HOME=ph "$EXE" setup "$c" >/dev/null)
	jqis "$HOME/$f" "$e.env" "{\"PAPO_HOME\":\"$T/ph\"}" "$c: PAPO_HOME in env, absolute"
	# Another PAPO_HOME updates the entry, and says so.
	expect 0 "$c: another PAPO_HOME" -- env PAPO_HOME=/srv/papo "$PAPO" setup "$c"
	has "$T/out" "papo.* updated" "$c: an entry changed is said updated"
	jqis "$HOME/$f" "$e.env.PAPO_HOME" '"/srv/papo"' "$c: the new PAPO_HOME"

	# A file with other servers and keys: they stay, the mode stays, and
	# --remove gives back exactly the original.
	fresh
	mkdir -p "$(dirname "$HOME/$f")"
	srv=${e%.papo}; srv=${srv#.}
	jq -n --arg s "$srv" '{theme: "dark", numStartups: 41, big: 1700000000123,
		nested: {a: [1, {b: null}], t: "tab\there é"}, empty: {},
		($s): {other: {command: "other-mcp", args: ["--x"], env: {}}}}' >"$HOME/$f"
	chmod 644 "$HOME/$f"
	cp "$HOME/$f" "$T/orig"
	expect 0 "$c: setup over other servers" -- setup "$c"
	jqis "$HOME/$f" "del($e$more)" "$(jq -c . "$T/orig")" "$c: every other key kept"
	is 644 "$(stat -c %a "$HOME/$f")" "$c: the file keeps its mode"
	expect 0 "$c: --remove" -- setup "$c" --remove
	has "$T/out" "^$HOME/$f: .*papo.* removed" "$c: --remove says what it removed"
	is "$(jq -S -c . "$T/orig")" "$(jq -S -c . "$HOME/$f")" "$c: --remove gives back the original"
	same "$HOME/$f" "$T/orig" "$c: --remove, in this layout, byte for byte"
	expect 0 "$c: --remove again" -- setup "$c" --remove
	same "$HOME/$f" "$T/orig" "$c: --remove twice"
	has "$T/out" "not set up" "$c: --remove again says there is nothing"

	# A malformed file is refused and left byte-identical.
	fresh
	mkdir -p "$(dirname "$HOME/$f")"
	printf '{\n  "mcpServers": {\n    "x": 1,\n  }\n' >"$HOME/$f"
	cp "$HOME/$f" "$T/orig"
	expect 1 "$c: a malformed file" -- setup "$c"
	has "$T/err" "^papo: $HOME/$f is not valid JSON \(line [0-9]+, column [0-9]+\)" "$c: the error names the file and where"
	lines "$T/err" 1 "$c: the error is one line"
	same "$HOME/$f" "$T/orig" "$c: a malformed file is left alone"
	printf '[1, 2]\n' >"$HOME/$f"
	expect 1 "$c: an array" -- setup "$c"
	has "$T/err" "not an object" "$c: JSON that is not an object is refused"
	printf '{"%s": []}\n' "$srv" >"$HOME/$f"
	cp "$HOME/$f" "$T/orig"
	expect 1 "$c: servers not an object" -- setup "$c"
	has "$T/err" "\"$srv\" is not an object" "$c: a servers key of another type is refused"
	same "$HOME/$f" "$T/orig" "$c: ... and left alone"

	# --http without a daemon: the default URL, and a note saying so.
	fresh
	expect 0 "$c: --http with no daemon" -- env PAPO_HOME="$T/nodaemon" "$PAPO" setup "$c" --http
	jqis "$HOME/$f" "$e.${URLKEY[$c]}" '"http://127.0.0.1:7777/mcp"' "$c: default URL"
	has "$T/out" 'has no room yet: join one' "$c: the default URL is explained (a home with no room is told to join one)"
	jqis "$HOME/$f" "$e | has(\"headers\")" false "$c: no headers without a token"
done

# A file papo setup made is removed by --remove (and the directories it
# leaves empty), and
# the first run says how to undo it and that the home has no room yet.
for c in "${JSON_CLIENTS[@]}" codex opencode; do
	fresh
	expect 0 "$c: setup in an empty HOME" -- env PAPO_HOME="$T/noroom" "$PAPO" setup "$c"
	has "$T/out" "^undo: papo setup $c --remove\$" "$c: says how to undo it"
	has "$T/out" "^warning: $T/noroom has no room yet" "$c: warns of a home with no room"
	expect 0 "$c: --remove in that HOME" -- env PAPO_HOME="$T/noroom" "$PAPO" setup "$c" --remove
	is "" "$(find "$HOME" -mindepth 1)" "$c: every file and directory papo setup made is gone"
done
# What each harness's wake is made of: its hooks, their command, how
# long the stop hook may wait in the harness's unit, and the keys of its
# own papo's entry needs.
fresh
P="PAPO_HOME='$T/ph' $EXE hook"
PAPO_HOME=$T/ph setup codex >/dev/null
jqis "$HOME/.codex/hooks.json" '.hooks | keys' '["SessionStart","Stop","UserPromptSubmit"]' "codex: its three hooks in hooks.json"
jqis "$HOME/.codex/hooks.json" '.hooks.Stop[0].hooks[0]' "$(jq -cn --arg c "$P codex" '{type: "command", command: $c, timeout: 86400}')" "codex: the Stop hook"
has "$HOME/.codex/config.toml" '^default_tools_approval_mode = "approve"$' "codex: papo's tools run without asking (codex exec refuses them otherwise)"
PAPO_HOME=$T/ph setup codex >"$T/out"
has "$T/out" '^allow: Codex runs a new or changed hook only once you trust it' "codex: says the hooks must be trusted"
PAPO_HOME=$T/ph setup gemini >"$T/out"
jqis "$HOME/.gemini/settings.json" '.hooks.AfterAgent[0].hooks[0]' "$(jq -cn --arg c "$P gemini" '{type: "command", command: $c, timeout: 86400000}')" "gemini: the AfterAgent hook, its timeout in ms"
jqis "$HOME/.gemini/settings.json" '.hooks | keys' '["AfterAgent","BeforeAgent","SessionStart"]' "gemini: its three hooks"
has "$T/out" '^allow: Gemini CLI runs no MCP server and no hook in a folder it does not trust' "gemini: says the folder must be trusted"
PAPO_HOME=$T/ph setup qwen >/dev/null
jqis "$HOME/.qwen/settings.json" '.hooks.Stop[0].hooks[0].timeout' 86400000 "qwen: a day, in ms (Qwen Code reads 1000 and more as ms)"
jqis "$HOME/.qwen/settings.json" '.mcpServers.papo.alwaysLoadTools' true "qwen: papo's tools offered at once"
PAPO_HOME=$T/ph setup copilot >/dev/null
jqis "$HOME/.copilot/hooks/papo.json" '[.version, (.hooks | keys)]' '[1,["agentStop","sessionStart","userPromptSubmitted"]]' "copilot: papo's own hooks file"
jqis "$HOME/.copilot/hooks/papo.json" '.hooks.agentStop' "$(jq -cn --arg c "$P copilot" '[{type: "command", bash: $c, timeoutSec: 86400}]')" "copilot: the agentStop hook"
jqis "$HOME/.copilot/mcp-config.json" '.mcpServers.papo.tools' '["*"]' "copilot: every tool of papo's offered"
PAPO_HOME=$T/ph setup opencode >/dev/null
O=$HOME/.config/opencode
jqis "$O/opencode.json" '.mcp.papo' "$(jq -cn --arg e "$EXE" --arg h "$T/ph" '{type: "local", command: [$e, "mcp"], environment: {PAPO_HOME: $h}}')" "opencode: the local entry"
check "opencode: the plugin names this papo" grep -qF "\"$EXE\"" "$O/plugin/papo.js"
check "opencode: ... and PAPO_HOME" grep -qF "\"$T/ph\"" "$O/plugin/papo.js"
check "opencode: no placeholder left" test -z "$(grep -o '@PAPO[A-Z_]*@' "$O/plugin/papo.js")"
cp "$O/plugin/papo.js" "$T/copy"
PAPO_HOME=$T/ph setup opencode >"$T/out"
same "$O/plugin/papo.js" "$T/copy" "opencode: the plugin again, unchanged"
echo '// my own plugin' >"$O/plugin/papo.js"
expect 1 "opencode: a papo.js not papo's" -- env PAPO_HOME="$T/ph" "$PAPO" setup opencode
has "$T/err" "is not papo's plugin: it was left as it is" "opencode: another plugin of that name is refused"
expect 0 "opencode: --remove with a papo.js not papo's" -- env PAPO_HOME="$T/ph" "$PAPO" setup opencode --remove
is '// my own plugin' "$(cat "$O/plugin/papo.js")" "opencode: --remove leaves a plugin not papo's"
# Each harness's hook over the event it stops at: a run that ends after
# its turn (the event says "interactive": false) with nothing unread ends
# at once, saying nothing.
for h in claude-code codex gemini qwen copilot opencode; do
	expect 0 "papo hook $h: nothing waits" -- sh -c "echo '{\"hook_event_name\":\"Stop\",\"interactive\":false}' | PAPO_HOME='$T/nodaemon' timeout 5 '$EXE' hook $h"
done
expect 0 "papo hook: a harness it does not know" -- sh -c "echo '{}' | '$EXE' hook emacs"
has "$T/err" "no harness named 'emacs' \(claude-code, codex, gemini, qwen, copilot, opencode\)" "papo hook: an unknown harness named, and the known ones"

mkdir -p "$T/withroom" && touch "$T/withroom/room.json"
fresh
PAPO_HOME="$T/withroom" setup gemini >"$T/out"
check "a home with a room: no warning" test -z "$(grep "^warning:" "$T/out")"

# VS Code's files may hold comments: refused, named, left alone.
fresh
mkdir -p "$HOME/.config/Code/User"
printf '{\n  // mine\n  "servers": {}\n}\n' >"$HOME/.config/Code/User/mcp.json"
cp "$HOME/.config/Code/User/mcp.json" "$T/orig"
expect 1 "vscode: comments" -- setup vscode
has "$T/err" 'has comments, which papo setup would lose' "vscode: comments explained"
same "$HOME/.config/Code/User/mcp.json" "$T/orig" "vscode: a file with comments is left alone"
# XDG_CONFIG_HOME moves VS Code's file.
fresh
expect 0 "vscode: XDG_CONFIG_HOME" -- env XDG_CONFIG_HOME="$HOME/xdg" "$PAPO" setup vscode
jqis "$HOME/xdg/Code/User/mcp.json" '.servers.papo.command' "\"$EXE\"" "vscode: under XDG_CONFIG_HOME"
# A settings file kept as a symlink is edited where it points.
fresh
mkdir -p "$HOME/dots" "$HOME/.cursor"
echo '{"mcpServers": {"x": {"url": "http://x/"}}}' >"$HOME/dots/mcp.json"
ln -s ../dots/mcp.json "$HOME/.cursor/mcp.json"
expect 0 "cursor: a symlinked file" -- setup cursor
check "cursor: the symlink stays a symlink" test -L "$HOME/.cursor/mcp.json"
jqis "$HOME/dots/mcp.json" '.mcpServers | keys' '["papo","x"]' "cursor: the file it points to edited"

# --- Claude Code's hooks and crossSessionInbound.
S=$SETTINGS
hooks() { # hooks EVENT: how many of papo's hooks it has
	jq "[.hooks.$1[]?.hooks[]? | select(.command | test(\"papo'? hook\$\"))] | length" "$HOME/$S"
}
fresh
setup claude-code >/dev/null
setup claude-code >"$T/out"
is 1 "$(hooks SessionStart)" "claude-code: SessionStart has papo's hook once after two runs"
is 1 "$(hooks UserPromptSubmit)" "claude-code: UserPromptSubmit has papo's hook once after two runs"
jqis "$HOME/$S" '.hooks | has("Stop")' false "claude-code: no Stop hook over stdio"
jqis "$HOME/$S" '.hooks.SessionStart[0]' "{\"hooks\":[{\"type\":\"command\",\"command\":\"$EXE hook\"}]}" "claude-code: the SessionStart group"
jqis "$HOME/$S" 'has("crossSessionInbound")' false "claude-code: crossSessionInbound untouched"
has "$T/out" "crossSessionInbound.*not set" "claude-code: a note on crossSessionInbound"
has "$T/out" "inbox socket" "claude-code: the stdio wake path said"
# Over HTTP: the Stop hook too, run aside; back to stdio takes it out.
setup claude-code --http >"$T/out"
jqis "$HOME/$S" '.hooks.Stop' "[{\"hooks\":[{\"type\":\"command\",\"command\":\"$EXE hook\",\"asyncRewake\":true,\"timeout\":86400}]}]" "claude-code: the Stop group over HTTP"
has "$T/out" "Stop hook" "claude-code: the HTTP wake path said"
jqis "$HOME/.claude.json" '.mcpServers.papo' '{"type":"http","url":"http://127.0.0.1:7777/mcp"}' "claude-code: the HTTP entry"
setup claude-code --http >/dev/null
is 1 "$(hooks Stop)" "claude-code: Stop has papo's hook once after two runs"
expect 0 "claude-code: back to stdio" -- setup claude-code
has "$T/out" "hooks.Stop: papo's hook removed" "claude-code: the Stop hook taken out, and said"
jqis "$HOME/$S" '.hooks | has("Stop")' false "claude-code: no Stop hook over stdio again"
jqis "$HOME/.claude.json" '.mcpServers.papo.type' '"stdio"' "claude-code: stdio again"
# PAPO_HOME goes into the hook's command, quoted for the shell.
PAPO_HOME="$T/it's here" setup claude-code >/dev/null
jqis "$HOME/$S" '.hooks.UserPromptSubmit[0].hooks[0].command' "\"PAPO_HOME='$T/it'\\\\''s here' $EXE hook\"" "claude-code: PAPO_HOME in the hook, quoted"
is 1 "$(hooks UserPromptSubmit)" "claude-code: still once with PAPO_HOME"
check "claude-code: the hook's command runs as sh reads it" test "$(sh -c "$(jq -r '.hooks.UserPromptSubmit[0].hooks[0].command' "$HOME/$S" | sed "s#$EXE hook\$#printenv PAPO_HOME#")")" = "$T/it's here"

# Other hooks and settings stay; an older papo's hook is replaced, not
# doubled; --remove gives back the rest exactly.
fresh
mkdir -p "$HOME/.claude"
jq -n '{model: "opus", permissions: {allow: ["Bash(ls)"]},
	hooks: {SessionStart: [{matcher: "startup", hooks: [{type: "command", command: "echo hi"}]}],
		PreToolUse: [{matcher: "Bash", hooks: [{type: "command", command: "lint.sh"}]}]}}' >"$HOME/$S"
cp "$HOME/$S" "$T/orig"
expect 0 "claude-code: setup over other hooks" -- setup claude-code --http
jqis "$HOME/$S" '.hooks.SessionStart[0]' '{"matcher":"startup","hooks":[{"type":"command","command":"echo hi"}]}' "claude-code: another SessionStart hook kept first"
is 1 "$(hooks SessionStart)" "claude-code: papo's SessionStart hook beside it"
jqis "$HOME/$S" '.hooks.PreToolUse' "$(jq -c .hooks.PreToolUse "$T/orig")" "claude-code: PreToolUse kept"
jqis "$HOME/$S" '[.model, .permissions]' '["opus",{"allow":["Bash(ls)"]}]' "claude-code: other settings kept"
expect 0 "claude-code: --remove" -- setup claude-code --remove
is "$(jq -S -c . "$T/orig")" "$(jq -S -c . "$HOME/$S")" "claude-code: --remove leaves the other hooks and settings exactly"
jq '.hooks.SessionStart += [{hooks: [{type: "command", command: "/opt/old/papo hook"}]}]
	| .hooks.UserPromptSubmit = [{hooks: [{type: "command", command: "PAPO_HOME=/x /usr/bin/papo hook"}, {type: "command", command: "mine.sh"}]}]' \
	"$T/orig" >"$HOME/$S"
setup claude-code >/dev/null
is 1 "$(hooks SessionStart)" "claude-code: an older papo's hook replaced, not doubled"
jqis "$HOME/$S" '[.hooks.SessionStart[].hooks[].command]' "[\"echo hi\",\"$EXE hook\"]" "claude-code: the hooks after replacing"
jqis "$HOME/$S" '[.hooks.UserPromptSubmit[].hooks[].command]' "[\"mine.sh\",\"$EXE hook\"]" "claude-code: a group's other hook kept"
setup claude-code --remove >/dev/null
jqis "$HOME/$S" '.hooks' "$(jq -c '.hooks + {UserPromptSubmit: [{hooks: [{type: "command", command: "mine.sh"}]}]}' "$T/orig")" "claude-code: --remove takes papo's hooks only"

# --accept-inbound sets crossSessionInbound; without it the key is not
# touched; --remove takes it out only when asked.
fresh
mkdir -p "$HOME/.claude"
echo '{"crossSessionInbound": "ask"}' >"$HOME/$S"
expect 0 "claude-code: setup with crossSessionInbound set" -- setup claude-code
jqis "$HOME/$S" '.crossSessionInbound' '"ask"' "claude-code: crossSessionInbound untouched without the flag"
has "$T/out" 'crossSessionInbound.*it is "ask"' "claude-code: the note says its value"
expect 0 "claude-code: --accept-inbound" -- setup claude-code --accept-inbound
jqis "$HOME/$S" '.crossSessionInbound' '"accept"' "claude-code: --accept-inbound sets accept"
has "$T/out" 'crossSessionInbound: "accept" updated' "claude-code: the change is said"
cp "$HOME/$S" "$T/copy"
expect 0 "claude-code: --accept-inbound again" -- setup claude-code --accept-inbound
same "$HOME/$S" "$T/copy" "claude-code: --accept-inbound twice"
expect 0 "claude-code: --remove" -- setup claude-code --remove
jqis "$HOME/$S" '.crossSessionInbound' '"accept"' "claude-code: --remove alone leaves crossSessionInbound"
expect 0 "claude-code: --remove --accept-inbound" -- setup claude-code --remove --accept-inbound
check "claude-code: --remove --accept-inbound takes it out (and the file, left empty, with it)" test ! -e "$HOME/$S"
has "$T/out" 'crossSessionInbound: "accept" removed' "claude-code: and says so"

# A malformed settings.json stops the run before .claude.json is written.
fresh
mkdir -p "$HOME/.claude"
printf '{"hooks": ' >"$HOME/$S"
cp "$HOME/$S" "$T/orig"
expect 1 "claude-code: malformed settings.json" -- setup claude-code
has "$T/err" "$HOME/$S is not valid JSON" "claude-code: settings.json named"
same "$HOME/$S" "$T/orig" "claude-code: malformed settings.json left alone"
check "claude-code: .claude.json not written either" test ! -e "$HOME/.claude.json"
# A hook of the user's that merely ends in "papo hook" is the user's
# (issue 37): setup and --remove leave it.
fresh
mkdir -p "$HOME/.claude"
echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"docker exec box papo hook"}]}],"SessionStart":[{"hooks":[{"type":"command","command":"ssh host papo hook"}]}]}}' >"$HOME/$S"
expect 0 "claude-code: beside the user's own 'docker exec box papo hook'" -- setup claude-code
jqis "$HOME/$S" '[.hooks.Stop[].hooks[].command]' '["docker exec box papo hook"]' "claude-code: the user's Stop hook kept by setup"
jqis "$HOME/$S" '[.hooks.SessionStart[].hooks[].command] | index("ssh host papo hook") != null' true "claude-code: the user's SessionStart hook kept beside papo's"
expect 0 "claude-code: --remove beside the user's hooks" -- setup claude-code --remove
jqis "$HOME/$S" '[.hooks[][].hooks[].command] | sort' '["docker exec box papo hook","ssh host papo hook"]' "claude-code: --remove leaves the user's hooks"
# A dangling settings.json link is not replaced by a file.
fresh
mkdir -p "$HOME/.claude"
ln -s "$HOME/dots/claude-settings.json" "$HOME/$S"
expect 1 "claude-code: settings.json a link to nothing" -- setup claude-code
has "$T/err" "is a symbolic link to .*which does not exist" "claude-code: the dangling link named"
check "claude-code: the link stays a link" test -L "$HOME/$S"
# CLAUDE_CONFIG_DIR holds both files.
fresh
expect 0 "claude-code: CLAUDE_CONFIG_DIR" -- env CLAUDE_CONFIG_DIR="$HOME/cc" "$PAPO" setup claude-code
jqis "$HOME/cc/.claude.json" '.mcpServers.papo.command' "\"$EXE\"" "claude-code: .claude.json under CLAUDE_CONFIG_DIR"
jqis "$HOME/cc/settings.json" '.hooks.SessionStart | length' 1 "claude-code: settings.json under CLAUDE_CONFIG_DIR"

# --- Codex: a TOML table, every other byte left.
C=.codex/config.toml
toml_ok() { # toml_ok FILE: Python's TOML reader takes it (skipped without tomllib)
	python3 -c 'import tomllib' 2>/dev/null || return 0
	python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$1"
}
toml_get() { # toml_get FILE KEY: mcp_servers.papo's KEY as JSON
	python3 -c 'import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], "rb"))["mcp_servers"]["papo"].get(sys.argv[2]), separators=(",", ":")))' "$1" "$2"
}
fresh
expect 0 "codex: setup" -- setup codex
has "$T/out" "^$HOME/$C: \[mcp_servers.papo\]: .* added" "codex: the change said with its file"
has "$HOME/$C" '^\[mcp_servers\.papo\]$' "codex: the table"
has "$HOME/$C" "^command = \"$EXE\"\$" "codex: command"
has "$HOME/$C" '^args = \["mcp"\]$' "codex: args"
check "codex: the file is TOML" toml_ok "$HOME/$C"
cp "$HOME/$C" "$T/copy"
expect 0 "codex: setup again" -- setup codex
same "$HOME/$C" "$T/copy" "codex: second run"
has "$T/out" 'already set up' "codex: second run says already set up"
fresh
expect 0 "codex: --print" -- setup codex --print
check "codex: --print wrote no file" test -z "$(find "$HOME" -mindepth 1 | head -1)"
has "$T/out" '^    \[mcp_servers.papo\]$' "codex: --print shows the table"
fresh
expect 0 "codex: CODEX_HOME and PAPO_HOME" -- env CODEX_HOME="$HOME/cx" PAPO_HOME='/p "q"\x' "$PAPO" setup codex
has "$HOME/cx/config.toml" '^env = \{ PAPO_HOME = "/p \\"q\\"\\\\x" \}$' "codex: PAPO_HOME in env, escaped"
check "codex: an escaped value is TOML" toml_ok "$HOME/cx/config.toml"
if python3 -c 'import tomllib' 2>/dev/null; then
	is '{"PAPO_HOME":"/p \"q\"\\x"}' "$(toml_get "$HOME/cx/config.toml" env)" "codex: TOML reads PAPO_HOME back"
fi
# Other tables, comments and strings that look like headers stay byte
# for byte; --remove gives back the original file.
fresh
mkdir -p "$HOME/.codex"
cat >"$HOME/$C" <<'EOF'
# my settings
model = "o3"

[mcp_servers.other]
command = "other"
args = ["a", "[not.a.table]"]

# the profile
[profiles.fast]
model = """
[mcp_servers.papo]
"""
EOF
chmod 640 "$HOME/$C"
cp "$HOME/$C" "$T/orig"
expect 0 "codex: setup over other tables" -- setup codex
check "codex: the result is TOML" toml_ok "$HOME/$C"
same <(head -c "$(stat -c %s "$T/orig")" "$HOME/$C") "$T/orig" "codex: every byte before papo's table"
is 640 "$(stat -c %a "$HOME/$C")" "codex: the file keeps its mode"
expect 0 "codex: --remove" -- setup codex --remove
same "$HOME/$C" "$T/orig" "codex: --remove gives back the original"
# A papo table in the middle is replaced where it is, a subtable with it.
printf 'a = 1\n\n[mcp_servers.papo]\ncommand = "old"\n\n[mcp_servers.papo.env]\nX = "1"\n\n# b\n[b]\nc = 2\n' >"$HOME/$C"
setup codex --http >/dev/null
check "codex: replaced in the middle, TOML" toml_ok "$HOME/$C"
is "a = 1

[mcp_servers.papo]
url = \"http://127.0.0.1:7777/mcp\"
default_tools_approval_mode = \"approve\"

# b
[b]
c = 2" "$(cat "$HOME/$C")" "codex: the table replaced in place, its subtable with it"
setup codex --remove >/dev/null
is "a = 1

# b
[b]
c = 2" "$(cat "$HOME/$C")" "codex: --remove in the middle"
# Malformed, or papo defined in a form a table would clash with: refused.
for bad in 'x = "open\n' '[mcp_servers]\npapo = { command = "x" }\n' 'mcp_servers = { }\n' 'a = [1,\n'; do
	printf "$bad" >"$HOME/$C"
	cp "$HOME/$C" "$T/orig"
	expect 1 "codex: refused: $bad" -- setup codex
	has "$T/err" "^papo: $HOME/$C, line [0-9]+: " "codex: the error names the file and line ($bad)"
	same "$HOME/$C" "$T/orig" "codex: left alone ($bad)"
done

# --- --http against a real daemon with a token: its URL and the token,
# and that URL answers MCP with the header written.
export PAPO_TOKEN=sekrit-token-0123456789abcdefghij
start ana --token "$PAPO_TOKEN" || { finish; exit 1; }
mcp_ok() { # mcp_ok URL AUTHORIZATION: initialize answers 200
	is 200 "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H "Authorization: $2" \
		-d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"setup.sh","version":"1"}}}' "$1")" "MCP at $1 with the header written"
}
for c in "${JSON_CLIENTS[@]}"; do
	f=${FILE[$c]} e=${ENTRY[$c]}
	fresh
	expect 0 "$c: --http" -- env PAPO_HOME="$T/ana" "$PAPO" setup "$c" --http
	jqis "$HOME/$f" "$e.${URLKEY[$c]}" "\"${URL[ana]}/mcp\"" "$c: the daemon's URL"
	jqis "$HOME/$f" "$e.headers" "{\"Authorization\":\"Bearer $PAPO_TOKEN\"}" "$c: the token header"
	[ "${TYPED[$c]}" = 1 ] && jqis "$HOME/$f" "$e.type" '"http"' "$c: type http"
	mcp_ok "$(jq -r "$e.${URLKEY[$c]}" "$HOME/$f")" "$(jq -r "$e.headers.Authorization" "$HOME/$f")"
	cp "$HOME/$f" "$T/copy"
	PAPO_HOME="$T/ana" setup "$c" --http >"$T/out"
	same "$HOME/$f" "$T/copy" "$c: --http twice"
	has "$T/out" 'already set up' "$c: --http twice says so"
	# Over stdio the token goes into env, for papo mcp.
	PAPO_HOME="$T/ana" setup "$c" >/dev/null
	jqis "$HOME/$f" "$e.env" "{\"PAPO_HOME\":\"$T/ana\",\"PAPO_TOKEN\":\"$PAPO_TOKEN\"}" "$c: PAPO_HOME and PAPO_TOKEN in a stdio entry"
done
fresh
expect 0 "codex: --http" -- env PAPO_HOME="$T/ana" "$PAPO" setup codex --http
has "$HOME/$C" "^url = \"${URL[ana]}/mcp\"\$" "codex: the daemon's URL"
has "$HOME/$C" '^bearer_token_env_var = "PAPO_TOKEN"$' "codex: the token by its variable"
has "$T/out" 'export it where Codex starts' "codex: the token's variable explained"
check "codex: --http is TOML" toml_ok "$HOME/$C"
# The Claude Code hooks over HTTP carry the daemon's PAPO_HOME.
fresh
PAPO_HOME="$T/ana" setup claude-code --http >/dev/null
jqis "$HOME/$S" '.hooks.Stop[0].hooks[0].command' "\"PAPO_HOME='$T/ana' $EXE hook\"" "claude-code: the Stop hook names PAPO_HOME"
stop ana
unset PAPO_TOKEN

finish
