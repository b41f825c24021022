"""A second judge of studymon's evidence folders, written apart from the product's, for tests only.

See README.md in this folder: what it is, how it was written, what it covers, and the open
questions of the contract it met.
"""

from tests.oracle.campaign import judge_campaign
from tests.oracle.study import judge_study
from tests.oracle.verdict import OracleVerdict

__all__ = ["OracleVerdict", "judge_campaign", "judge_study"]
