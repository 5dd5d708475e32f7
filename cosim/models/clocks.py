"""When two clocks are one: gem5 keeps clock periods in whole ticks."""

# At 1e12 ticks/s 1.8 GHz becomes 556 ticks = 1798.6 MHz. Half a tick is at most 0.2 % at 4 GHz, so frequencies within
# 0.3 % count as equal (a V-f table's point, a trained clock, the clock before and after a change).
FREQ_REL_TOL = 0.003
