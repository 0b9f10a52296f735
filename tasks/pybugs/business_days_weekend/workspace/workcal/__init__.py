"""workcal package."""
from workcal.days import add_business_days, is_business_day
from workcal.holidays import is_weekend
