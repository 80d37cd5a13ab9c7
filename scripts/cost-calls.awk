# Calls into the SystemC kernel, from a raw callgrind profile (names are compressed to "(id)"
# after their first use): thread activations (every one ends in a call of sc_core::wait;
# counting suspend_me instead counts each twice, once per stack of the coroutine switch), method
# process runs, event notifications and triggers, sc_start. Prints "counter<TAB>calls".
function name_of(s,   id, rest) {
  id = s; sub(/\).*/, ")", id); rest = s; sub(/^\([0-9]+\) ?/, "", rest)
  if (rest != "") names[id] = rest
  return id
}
/^cfn=/ { cur = name_of(substr($0, 5)); next }
/^fn=/ { (void = name_of(substr($0, 4))); next }
/^calls=/ { split(substr($0, 7), a, " "); calls[cur] += a[1]; next }
END {
  for (id in calls) {
    n = names[id]
    k = ""
    if (n ~ /^sc_core::wait\(/) k = "systemc.thread_waits (activations)"
    else if (n ~ /^sc_core::sc_method_process::run_process|^sc_core::sc_method_process::.*execute/) k = "systemc.method_runs"
    else if (n ~ /^sc_core::sc_event::notify(_delayed)?\(/) k = "systemc.event_notify_calls"
    else if (n ~ /^sc_core::sc_event::trigger\(/) k = "systemc.event_triggers"
    else if (n ~ /^sc_core::sc_start\(/) k = "systemc.sc_start_calls"
    if (k != "") sum[k] += calls[id]
  }
  for (k in sum) printf "%s\t%d\n", k, sum[k]
}
