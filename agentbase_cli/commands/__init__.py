"""The command modules; each exports ``COMMANDS``, the click commands it adds to ``agentbase``."""
