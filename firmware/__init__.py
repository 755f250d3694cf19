"""The appliance: camera sources, OLED screens, buttons, the referee loop, persistence, the CLI."""
