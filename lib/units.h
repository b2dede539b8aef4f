/*
 * units.h: time units, spelled one way.  The loop counts in nanoseconds
 * (loop_now_ns), message times in milliseconds (loop_wall_ms).
 */
#ifndef PAPO_UNITS_H
#define PAPO_UNITS_H

#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull

#endif
