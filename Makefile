# Shortcuts for the README's commands; scripts/bootstrap.sh does the work.
.PHONY: run test bench
run:
	bash scripts/bootstrap.sh run
test:
	bash scripts/bootstrap.sh test
bench:
	bash scripts/bootstrap.sh bench
