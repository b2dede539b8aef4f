# fish completion for papo(1): commands with what each does, each
# command's options, and the values papo knows.  Installed as
# share/fish/vendor_completions.d/papo.fish.  tests/install/tree.sh
# checks it against `papo --help`.

set -l cmds new join rooms leave rename invite serve mcp hook say get status \
    history tail admin rotate remove tokens setup doctor version
complete -c papo -f
complete -c papo -n "not __fish_seen_subcommand_from $cmds" -l help \
    -d 'list the commands'
complete -c papo -n "not __fish_seen_subcommand_from $cmds" -l version \
    -d 'the version, protocols and libraries'

function __papo_cmd -a name description
    complete -c papo -n "not __fish_seen_subcommand_from $cmds" -a $name \
        -d $description
end
__papo_cmd new 'create a room and print its invite'
__papo_cmd join 'join the room of an invite'
__papo_cmd rooms 'list the rooms, or set the default one'
__papo_cmd leave 'leave a room'
__papo_cmd rename 'rename this member'
__papo_cmd invite "print a room's invite"
__papo_cmd serve 'run the daemon'
__papo_cmd mcp 'speak MCP over stdio'
__papo_cmd hook "for an agent harness's hooks"
__papo_cmd say 'send a message'
__papo_cmd get 'fetch a shared file'
__papo_cmd status 'the room and its members'
__papo_cmd history 'the last messages, or a search'
__papo_cmd tail 'follow the room'
__papo_cmd admin 'make a member an admin'
__papo_cmd rotate "change the room's key"
__papo_cmd remove 'remove a member'
__papo_cmd tokens 'list or revoke OAuth grants'
__papo_cmd setup 'add papo to an agent harness'
__papo_cmd doctor 'what to paste into a bug report'
__papo_cmd version 'the version, protocols and libraries'

# The names the running daemon knows: its rooms (papo rooms --json) or
# its default room's members (papo status --json); none when it does not
# run.
function __papo_names -a what
    papo $what --json 2>/dev/null | string match -ar '"name":"[^"\\\\]*"' |
        string replace -r '^"name":"(.*)"$' '$1'
end
complete -c papo -n '__fish_seen_subcommand_from leave' -a '(__papo_names rooms)'
complete -c papo -n '__fish_seen_subcommand_from admin remove' \
    -a '(__papo_names status)'

# An option of some commands: papo_opt "CMD ..." LONG [SHORT] [-r] DESC
function __papo_opt -a on long short
    set -l rest $argv[4..-1]
    set -l args -c papo -n "__fish_seen_subcommand_from $on" -l $long
    if test -n "$short"
        set -a args -s $short
    end
    complete $args $rest
end
__papo_opt "new join serve mcp say" name '' -r -d 'a name'
__papo_opt "new join serve" about '' -r -d 'a line about this member'
set -l in_room new invite serve mcp say get status history tail admin \
    rotate remove rename
__papo_opt "$in_room" room '' -x -a '(__papo_names rooms)' \
    -d 'the room: a name, an id or its start'
__papo_opt "new join get" force '' -d 'replace'
set -l in_json rooms leave say status history tail admin rotate remove \
    tokens rename
__papo_opt "$in_json" json '' -d 'print JSON'
__papo_opt leave delete '' -d 'delete its files'
__papo_opt "invite serve" listen '' -r -d 'QUIC address, ADDR:PORT'
__papo_opt serve http '' -r -d 'HTTP API, MCP, dashboard: ADDR:PORT'
__papo_opt serve advertise '' -r -d 'where members reach this one'
__papo_opt serve turn '' -r -d 'a TURN server, turn:HOST[:PORT]'
__papo_opt serve token '' -r -d 'the bearer token'
__papo_opt serve tls '' -x -a 'self off' -d 'HTTPS'
__papo_opt mcp channels '' -d 'messages as pushes'
__papo_opt "mcp hook" agent '' -r -d "the agent's name"
__papo_opt mcp new-room '' -d 'make a room when there is none'
__papo_opt say file '' -r -F -d 'share a file'
__papo_opt say to '' -x -a '(__papo_names status)' -d 'privately to one member'
__papo_opt say public '' -d 'with --to: the room reads it too'
__papo_opt say reply-to '' -r -d 'an answer to a message'
__papo_opt get output o -r -F -d 'save as'
__papo_opt get wait '' -d 'wait for a member that holds it'
__papo_opt history query q -r -d 'search for words'
__papo_opt history from '' -r -d 'by a member'
__papo_opt history since '' -r -d 'since a time'
__papo_opt history before '' -r -d 'before a time'
__papo_opt history after '' -r -d 'after a time'
__papo_opt history thread '' -r -d 'a message and its replies'
__papo_opt history files '' -d 'messages that share files'
__papo_opt history all-rooms '' -d 'search every room'
__papo_opt tail all-rooms '' -d 'follow every room'
complete -c papo -n '__fish_seen_subcommand_from history tail' -s n -r \
    -d 'how many'
__papo_opt setup print '' -d 'show, write nothing'
__papo_opt setup remove '' -d 'take papo out'
__papo_opt setup http '' -d "the daemon's URL"
__papo_opt setup accept-inbound '' -d 'crossSessionInbound: accept'
complete -c papo -n '__fish_seen_subcommand_from setup' \
    -a 'claude-code codex gemini qwen copilot opencode cursor vscode'
complete -c papo -n '__fish_seen_subcommand_from hook' \
    -a 'claude-code codex gemini qwen copilot opencode'
complete -c papo -n '__fish_seen_subcommand_from rooms' -a default
complete -c papo -n '__fish_seen_subcommand_from tokens' -a revoke
complete -c papo -n "__fish_seen_subcommand_from $cmds" -l help \
    -d 'what the command does'
