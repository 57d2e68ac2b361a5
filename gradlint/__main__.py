from gradlint.console import main

main()
