"""The classes of a kill's targets (contract §7): what a kill leaves a run in.

A target is a run the kill caught between two of its records: started
without a result (in flight); its container started but no ``runStarted``
yet (unrecorded); charged but not started; with a result but its round not
settled.  ``kill.json`` names each target's class, the judge checks each
class's story, and the explorer counts a crash point's targets by class.
"""

from __future__ import annotations

IN_FLIGHT = "inFlight"
UNRECORDED = "unrecorded"
CHARGED = "charged"
UNSETTLED = "unsettled"
TARGET_CLASSES = (IN_FLIGHT, UNRECORDED, CHARGED, UNSETTLED)
