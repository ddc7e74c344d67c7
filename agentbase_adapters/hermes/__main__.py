"""``python -m agentbase_adapters.hermes install [--hermes-home DIR] [--activate]``."""

from __future__ import annotations

import argparse
import sys

from ._plugin import install_plugin


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentbase_adapters.hermes",
                                     description="Install agentbase as a Hermes Agent memory provider plugin.")
    commands = parser.add_subparsers(dest="command", required=True)
    install = commands.add_parser("install", help="write $HERMES_HOME/plugins/agentbase/")
    install.add_argument("--hermes-home", help="Hermes' home directory (default: $HERMES_HOME or ~/.hermes)")
    install.add_argument("--activate", action="store_true", help="also set memory.provider: agentbase in config.yaml")
    args = parser.parse_args(argv)
    path = install_plugin(args.hermes_home, activate=args.activate)
    print(f"installed the agentbase memory provider in {path}")
    if not args.activate:
        print("activate it with: hermes config set memory.provider agentbase")
    return 0


if __name__ == "__main__":
    sys.exit(main())
