"""The typed inferstack configuration: pydantic models, the YAML loader and readable errors."""

from inferstack.config.errors import ConfigError, Problem
from inferstack.config.loader import load_config, parse_config
from inferstack.config.model import (
    CapacityType,
    ClusterConfig,
    ControlPlaneLog,
    EndpointAccess,
    EnvironmentConfig,
    InferstackConfig,
    NetworkConfig,
    RuleAcknowledgement,
    SystemNodeGroupConfig,
)

__all__ = [
    "CapacityType",
    "ClusterConfig",
    "ConfigError",
    "ControlPlaneLog",
    "EndpointAccess",
    "EnvironmentConfig",
    "InferstackConfig",
    "NetworkConfig",
    "Problem",
    "RuleAcknowledgement",
    "SystemNodeGroupConfig",
    "load_config",
    "parse_config",
]
