from accelconf.cli import run

run()
