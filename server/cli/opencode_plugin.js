// papo's opencode plugin, written by `papo setup opencode` (placeholder
// until the plugin lands): on session.idle it runs `papo hook opencode`.
const PAPO = "@PAPO@";
const PAPO_HOME = "@PAPO_HOME@";
export const PapoPlugin = async () => ({});
