# SPDX-License-Identifier: Apache-2.0
"""`python -m cbgpu`: prints the versions, the library's build facts and the visible devices."""
from ._versions import show_versions

show_versions()
