"""Task registrations (gymnasium ids ``DiffSim-*``). Importing this package registers them."""

from .direct.locomotion.velocity.config import anymal_b as _direct_anymal_b  # noqa: F401
from .direct.locomotion.velocity.config import anymal_c as _direct_anymal_c  # noqa: F401
from .direct.locomotion.velocity.config import go2 as _direct_go2  # noqa: F401
from .direct.locomotion.velocity.config import warp_quadruped as _direct_warp_quadruped  # noqa: F401
from .locomotion.velocity.config import anymal_b as _manager_anymal_b  # noqa: F401
from .locomotion.velocity.config import anymal_c as _manager_anymal_c  # noqa: F401
from .locomotion.velocity.config import go2 as _manager_go2  # noqa: F401
