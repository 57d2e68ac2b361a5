from gradlint.cli import main

main(prog_name="gradlint")
