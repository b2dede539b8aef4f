#!/usr/bin/env bash
# mcp_names.sh: names are not unique (issue 22, item 9).  cy takes the
# owner's name, ana; bo's agent must still tell the two apart: every
# message carries from_id and from_role, and while two members share a
# name from_label says "ana (id 1a2b3c4d…)": in wait's results, in the
# channel push's meta, in /api/events and in the wake's text.
# Usage: mcp_names.sh PATH_TO_PAPO.
PAPO=${1:?usage: mcp_names.sh PATH_TO_PAPO}
. "$(dirname "$0")/lib.sh"
unset PAPO_TOKEN

PAPO_HOME=$T/ana "$PAPO" new --name ana >/dev/null
start ana
join bo "$(invite ana)"
start bo
PAPO_HOME=$T/cy "$PAPO" join "$(invite ana)" --name ana >/dev/null
start cy --name ana          # the last --name is the one taken
check "bo online at ana" until_true 20 online ana bo
named_ana_twice() { [ "$(api bo /api/status | jq '[.members[] | select(.name == "ana")] | length')" = 2 ]; }
check "bo knows two members named ana" until_true 20 named_ana_twice
check "cy online at bo" until_true 20 bash -c "curl -s '${URL[bo]}/api/status' | jq -e '[.members[] | select(.name == \"ana\" and .online)] | length == 2' >/dev/null"
ANA_ID=$(api ana /api/status | jq -r .me.id)
CY_ID=$(api cy /api/status | jq -r .me.id)
check "two members, two ids" test -n "$ANA_ID" -a -n "$CY_ID" -a "$ANA_ID" != "$CY_ID"

M=${URL[bo]}/mcp
# rpc and jqt: lib.sh's.
# A client that takes channel pushes, with its stream open.
rpc "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"claude/channel":{}}},"clientInfo":{"name":"sh","version":"1"}}}'
SID=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
curl -sN --max-time 60 -H 'Accept: text/event-stream' -H "MCP-Session-Id: $SID" "$M" >"$T/get" &
get=$!
curl -sN --max-time 60 "${URL[bo]}/api/events" >"$T/events" &
events=$!
check "the stream is open" until_true 10 grep -qE '^data: ?$' "$T/get"

papo ana say "from the owner" >/dev/null
papo cy say "from the other ana" >/dev/null
chan() { sed -n 's/^data: //p' "$T/get" | grep '"notifications/claude/channel"' | jq -s "$@" >/dev/null; }
check "both pushed" until_true 15 bash -c "[ \"\$(sed -n 's/^data: //p' '$T/get' | grep -c 'notifications/claude/channel')\" = 2 ]"
check "the owner's push: from_id, from_role owner, from_label with the short id" \
	chan -e --arg id "$ANA_ID" 'map(select(.params.content == "from the owner"))[0].params.meta | .from == "ana" and .from_id == $id and .from_role == "owner" and .from_label == "ana (id \($id[0:8])…)"'
check "the other ana's push: its own id, from_role member" \
	chan -e --arg id "$CY_ID" 'map(select(.params.content == "from the other ana"))[0].params.meta | .from == "ana" and .from_id == $id and .from_role == "member" and .from_label == "ana (id \($id[0:8])…)"'
evs() { sed -n 's/^data: //p' "$T/events" | jq -s "$@" >/dev/null 2>&1; }
check "/api/events carries from_id, from_role and from_label" until_true 10 \
	evs -e --arg a "$ANA_ID" --arg c "$CY_ID" '[.[] | .message? // . | select(.text? == "from the owner" or .text? == "from the other ana") | [.from_id, .from_role, .from_label]] | sort == ([[$a, "owner", "ana (id \($a[0:8])…)"], [$c, "member", "ana (id \($c[0:8])…)"]] | sort)'
kill "$get" "$events" 2>/dev/null; wait "$get" "$events" 2>/dev/null

# A client without pushes: the two wait for its wait, and the wake's
# text names them apart.
rpc "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
SID2=$(grep -i '^mcp-session-id:' "$T/hdr" | cut -d' ' -f2 | tr -d '\r')
papo ana say "owner again" >/dev/null
papo cy say "impostor again" >/dev/null
queued() { api bo '/api/wake?timeout_s=0' | jq -e '.unread == 2' >/dev/null; }
check "both queued for bo's agent" until_true 15 queued
api bo '/api/wake?timeout_s=0' >"$T/wake"
check "the wake's text tells the two anas apart" jqt --arg a "$ANA_ID" --arg c "$CY_ID" '(.text | contains("ana (id \($a[0:8])…)") and contains("ana (id \($c[0:8])…)")) and (.from | length == 2)' "$T/wake"
rpc "$SID2" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"timeout_s":5}}}'
check "wait: the two carry distinct from_id, their roles and labels" jqt --arg a "$ANA_ID" --arg c "$CY_ID" \
	'[.result.structuredContent.messages[] | [.text, .from, .from_id, .from_role, .from_label]] == [["owner again", "ana", $a, "owner", "ana (id \($a[0:8])…)"], ["impostor again", "ana", $c, "member", "ana (id \($c[0:8])…)"]]'  "$T/body"

# On ana's own daemon the other ana collides with ana itself.
papo cy say "to the owner" >/dev/null
check "ana's history labels the other ana with its id" until_true 10 bash -c \
	"curl -s '${URL[ana]}/api/history?limit=10' | jq -e --arg c '$CY_ID' '.messages[] | select(.text == \"to the owner\") | .from_label == \"ana (id \(\$c[0:8])…)\" and .from_role == \"member\"' >/dev/null"
# Where a name is not shared, the label is the name.
papo bo say "hello from bo" >/dev/null
check "bo's label is bo" until_true 10 bash -c \
	"curl -s '${URL[ana]}/api/history?limit=10' | jq -e '.messages[] | select(.text == \"hello from bo\") | .from_label == \"bo\" and .from_role == \"member\"' >/dev/null"
# papo history prints the label too.
expect 0 "papo history on bo" -- papo bo history -n 20
has "$T/out" " ana \\(id ${ANA_ID:0:8}…\\): owner again$" "papo history names the owner with its id"
has "$T/out" " ana \\(id ${CY_ID:0:8}…\\): impostor again$" "papo history names the other ana with its id"
finish
